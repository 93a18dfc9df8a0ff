import Migrations
import TestSupport
import Testing

@Suite struct SQLStatementSplitterTests {
    @Test func splitsOnSemicolonsOutsideQuotesCommentsAndBodies() {
        let sql = """
            -- a comment; with a semicolon
            CREATE TABLE a (t text DEFAULT 'x;y', "odd;name" int);
            /* block; /* nested; */ still comment; */
            CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $$
            BEGIN
                RETURN 1; -- inside the body
            END
            $$;
            CREATE FUNCTION g() RETURNS text LANGUAGE sql AS $body$ SELECT 'a;b' $body$;
            SELECT E'it\\'s; escaped', 'doubled '';'' quote', $1;

            """
        let statements = SQLStatementSplitter.split(sql)
        #expect(statements.count == 4)
        #expect(statements[0].sql.hasPrefix("CREATE TABLE a"))
        #expect(statements[0].line == 2)
        #expect(statements[1].sql.hasSuffix("$$"))
        #expect(statements[1].sql.contains("RETURN 1; -- inside the body"))
        #expect(statements[1].line == 4)
        #expect(statements[2].sql.contains("$body$ SELECT 'a;b' $body$"))
        #expect(statements[3].sql.hasPrefix("SELECT E'it"))
        #expect(statements[3].sql.hasSuffix("$1"))
    }

    @Test(arguments: ["", "  \n", "-- only a comment\n", ";;", "/* c */ ;"])
    func emptyInputHasNoStatements(_ sql: String) {
        #expect(SQLStatementSplitter.split(sql).isEmpty)
    }

    @Test func aFinalStatementWithoutSemicolonIsKept() {
        #expect(SQLStatementSplitter.split("SELECT 1;\nSELECT 2").map(\.sql) == ["SELECT 1", "SELECT 2"])
    }

    @Test func everyRealMigrationSplitsIntoStatementsThatStartWithAKeyword() throws {
        let directory = try MigrationDirectory(url: TestPostgres.migrationsDirectory)
        for file in directory.files {
            for statement in SQLStatementSplitter.split(file.sql) {
                let firstWord = statement.sql.split(whereSeparator: { $0.isWhitespace }).first.map(String.init) ?? ""
                #expect(
                    ["CREATE", "COMMENT", "ALTER", "GRANT", "DO", "SELECT", "DROP", "INSERT", "REVOKE", "UPDATE", "SET"].contains(firstWord.uppercased()),
                    "\(file.fileName) line \(statement.line) starts with \(firstWord)")
            }
        }
    }
}
