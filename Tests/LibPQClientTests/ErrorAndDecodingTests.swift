import Foundation
import LibPQClient
import TestSupport
import Testing

@Suite struct ErrorAndDecodingTests {
    @Test func uniqueViolationSurfacesAsSQLState23505WithoutTheValue() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        let secret = "secret-value-\(UUID())"
        try await database.withPool { pool in
            try await pool.withConnection { connection in
                try await connection.query("CREATE TABLE accounts (email text CONSTRAINT accounts_email_key UNIQUE)")
                try await connection.query("INSERT INTO accounts VALUES (\(secret))")
                do {
                    try await connection.query("INSERT INTO accounts VALUES (\(secret))")
                    Issue.record("the duplicate insert succeeded")
                } catch let error as PGError {
                    #expect(error.sqlState == .uniqueViolation)
                    #expect(error.kind == .server)
                    #expect(error.constraint == "accounts_email_key")
                    #expect(error.message.contains("accounts_email_key"))
                    #expect(error.detail != nil)
                    // The detail names the key's value; the description that reaches logs must not.
                    #expect(error.detail?.contains(secret) == true)
                    #expect(!error.description.contains(secret))
                }
            }
        }
    }

    @Test func errorDescriptionsNeverCarryParameters() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        let secret = "p@ssw0rd-\(UUID())"
        await #expect {
            try await database.withPool { pool in
                try await pool.withConnection { try await $0.query("SELECT \(secret)::int AS n") }
            }
        } throws: { error in
            // PostgreSQL's own message quotes the value ("invalid input syntax for type
            // integer: …"); the description, which reaches logs, must not.
            let error = error as! PGError
            return error.sqlState == .invalidTextRepresentation && error.message.contains(secret) && !error.description.contains(secret)
                && error.description.contains("22P02") && !String(describing: PGQuery("SELECT \(secret)")).contains(secret)
        }
    }

    @Test func aSyntaxErrorDoesNotPoisonTheConnection() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        try await database.withPool(size: 1) { pool in
            try await pool.withConnection { connection in
                let pid = connection.backendPID
                await #expect { try await connection.query("SELEC 1") } throws: { ($0 as? PGError)?.sqlState == .syntaxError }
                let value = try await connection.query("SELECT 41 + 1 AS answer").single().decode("answer", as: Int.self)
                #expect(value == 42)
                #expect(connection.backendPID == pid)
                #expect(!connection.isBroken)
            }
            // And inside a transaction: the failed transaction is rolled back, the next one works.
            await #expect(throws: PGError.self) {
                try await pool.withTransaction { try await $0.query("SELECT * FROM no_such_table") }
            }
            let after = try await pool.withTransaction { try await $0.query("SELECT 1 AS one").single().decode("one", as: Int.self) }
            #expect(after == 1)
            #expect(pool.statistics.open == 1)
        }
    }

    /// A Citus coordinator reports a worker it cannot reach as `08006` on its own healthy
    /// connection. Such an error, raised here the same way, keeps the connection: before, every
    /// request of a stopped worker's users threw away a good connection to the coordinator.
    @Test func aConnectionErrorReportedByTheServerKeepsAHealthyConnection() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        try await database.withPool(size: 1) { pool in
            try await pool.withConnection { connection in
                let pid = connection.backendPID
                await #expect {
                    try await connection.query("DO $$ BEGIN RAISE EXCEPTION 'connection to the remote node failed' USING ERRCODE = '08006'; END $$")
                } throws: { ($0 as? PGError)?.isConnectionFailure == true }
                #expect(!connection.isBroken)
                let one = try await connection.query("SELECT 1 AS one").single().decode("one", as: Int.self)
                #expect(one == 1)
                #expect(connection.backendPID == pid)
            }
            #expect(pool.statistics.errors == 0)
        }
    }

    @Test func decodingErrorsNameTheColumnAndTheTypes() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        let row = try await database.withPool { pool in
            try await pool.withConnection { try await $0.query("SELECT 7::int4 AS quantity, NULL::text AS note, 'x'::text AS word").single() }
        }
        do {
            _ = try row.decode("quantity", as: String.self)
            Issue.record("int4 decoded as String")
        } catch let error as PGError {
            #expect(error.kind == .decoding)
            #expect(error.message.contains("quantity") && error.message.contains("int4") && error.message.contains("String"))
        }
        #expect(throws: PGError.self) { try row.decode("note", as: String.self) }
        #expect(try row.decodeIfPresent("note", as: String.self) == nil)
        #expect(throws: PGError.self) { try row.decode("word", as: Int.self) }
        #expect(throws: PGError.self) { try row.decode("missing", as: Int.self) }
    }

    @Test func aFailedTransactionLeavesNothingBehind() async throws {
        struct Abort: Error {}
        let database = try await TestPostgres.shared.emptyDatabase()
        try await database.withPool { pool in
            try await pool.withConnection { try await $0.query("CREATE TABLE t (n int)") }
            await #expect(throws: Abort.self) {
                try await pool.withTransaction { connection in
                    try await connection.query("INSERT INTO t VALUES (\(1))")
                    throw Abort()
                }
            }
            try await pool.withTransaction { try await $0.query("INSERT INTO t VALUES (\(2))") }
            let values = try await pool.withConnection { try await $0.query("SELECT n FROM t").rows.map { try $0.decode("n", as: Int.self) } }
            #expect(values == [2])
        }
    }

    @Test func badConnectionStringsAndRefusedConnectionsAreConnectionErrors() async throws {
        #expect(throws: PGError.self) { try PGConnectionConfiguration.validate("host=localhost port") }
        #expect(throws: PGError.self) { try PGConnectionConfiguration.validate("postgres://localhost/db?no_such_option=1") }
        try PGConnectionConfiguration.validate("postgres://user:pw@localhost:5432/db?sslmode=disable")
        let pool = PGPool(configuration: .init(connection: .init(connectionString: "host=127.0.0.1 port=1 connect_timeout=2 password=hunter2"), maximumConnections: 1), logger: TestPostgres.logger)
        defer { pool.close() }
        do {
            try await pool.withConnection { _ in }
            Issue.record("connected to port 1")
        } catch let error as PGError {
            #expect(error.kind == .connection)
            #expect(error.isConnectionFailure)
            #expect(!error.description.contains("hunter2"))
        }
        #expect(pool.statistics.open == 0)
    }
}
