import Foundation
import LibPQClient
import TestSupport
import Testing

/// Queries built from pieces: placeholders are numbered in order however the pieces nest, and
/// generated SQL can only come from literals, integers and quoted names.
@Suite struct QueryCompositionTests {
    @Test func nestedAndJoinedQueriesNumberTheirPlaceholdersInOrder() {
        let inner: PGQuery = "SELECT \(1) AS a, \("x") AS b"
        let parts: [PGQuery] = ["\(10)", "\(20)", "\(30)"]
        let column: PGFragment = "c"
        let query: PGQuery = "WITH i AS (\(inner)) SELECT \(true), \(column), greatest(\(parts.joined(separator: ", "))) FROM i WHERE b = \("y")"
        #expect(query.sql == "WITH i AS (SELECT $1 AS a, $2 AS b) SELECT $3, c, greatest($4, $5, $6) FROM i WHERE b = $7")
        #expect(query.binds.count == 7)
        #expect(([] as [PGQuery]).joined(separator: ", ").sql == "")
        #expect(PGQuery(unsafeSQL: "SELECT '$1'").binds.isEmpty)
    }

    @Test func fragmentsQuoteNamesAndTextAndJoin() {
        #expect(PGFragment.identifier("we\"ird").sql == "\"we\"\"ird\"")
        #expect(PGFragment.literal("it's").sql == "'it''s'")
        // One quoter for literals: a backslash reads the same whatever standard_conforming_strings says.
        #expect(PGFragment.literal("a\\b").sql == "E'a\\\\b'")
        #expect(PGFragment.literal("a\\b").sql == PGQuery.quoteLiteral("a\\b"))
        let list: PGFragment = (["a", "b", "c"] as [PGFragment]).joined(separator: ", ")
        #expect(list.sql == "a, b, c")
        let numbered: PGFragment = "p\(3)"
        #expect(numbered.sql == "p3")
    }

    @Test func composedValuesArriveWhereTheyWereWritten() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        let hostile = "'); DROP TABLE x; -- $1 \\ \u{301}"
        let first: PGQuery = "SELECT \(Int64(1)) AS n, \(hostile)::text AS t"
        let second: PGQuery = "SELECT \(Int64(2)), \("two")::text"
        let name = PGFragment.identifier("odd \"name\" $2")
        let label = PGFragment.literal(hostile)
        let query: PGQuery = """
            SELECT n, t, \(label) AS label FROM (\([first, second].joined(separator: " UNION ALL "))) AS \(name)(n, t)
            WHERE n >= \(Int64(1)) ORDER BY n
            """
        let rows = try await database.withPool { pool in try await pool.withConnection { try await $0.query(query).rows } }
        #expect(try rows.map { try $0.decode("n", as: Int64.self) } == [1, 2])
        #expect(try rows.map { try $0.decode("t", as: String.self) } == [hostile, "two"])
        #expect(try rows.map { try $0.decode("label", as: String.self) } == [hostile, hostile])
    }
}
