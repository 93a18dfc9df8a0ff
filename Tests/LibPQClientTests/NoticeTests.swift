import LibPQClient
import Synchronization
import TestSupport
import Testing

/// A notice the server sends goes to the configuration's sink (libpq's default would print it
/// raw on stderr), with its fields.
@Suite struct NoticeTests {
    @Test func aWarningReachesTheConfiguredSink() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        let received = Mutex<[PGNotice]>([])
        let sink = PGNoticeSink { notice in received.withLock { $0.append(notice) } }
        let configuration = PGPool.Configuration(connection: .init(connectionString: database.connectionString, notices: sink), maximumConnections: 1)
        try await PGPool.withPool(configuration, logger: TestPostgres.logger) { pool in
            try await pool.withConnection { connection in
                try await connection.simpleQuery(unsafeSQL: "DO $$ BEGIN RAISE WARNING 'careful' USING DETAIL = 'the detail'; END $$")
                // Below client_min_messages (warning): not sent at all.
                try await connection.simpleQuery(unsafeSQL: "DO $$ BEGIN RAISE NOTICE 'quiet'; END $$")
            }
            try await pool.withTransaction { connection in
                try await connection.simpleQuery(unsafeSQL: "DO $$ BEGIN RAISE WARNING 'inside' USING ERRCODE = '01P01'; END $$")
            }
        }
        #expect(
            received.withLock { $0 } == [
                PGNotice(severity: "WARNING", sqlState: "01000", message: "careful", detail: "the detail"),
                PGNotice(severity: "WARNING", sqlState: "01P01", message: "inside", detail: nil),
            ])
    }

    /// `commands` runs each command as a statement of its own in one round trip; a failing one
    /// stops the rest, and the transaction it began is usable.
    @Test func commandsRunInOrderAndStopAtTheFirstFailure() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        try await database.withPool(size: 1) { pool in
            try await pool.withConnection { connection in
                try await connection.commands(unsafeSQL: ["BEGIN", "SET LOCAL application_name = 'first'", "SET LOCAL application_name = 'second'"])
                #expect(try await connection.query("SELECT current_setting('application_name') AS name").single().decode("name", as: String.self) == "second")
                try await connection.simpleQuery(unsafeSQL: "ROLLBACK")
                await #expect(throws: PGError.self) {
                    try await connection.commands(unsafeSQL: ["BEGIN", "SET LOCAL no_such_setting = 1", "SET LOCAL application_name = 'never'"])
                }
                try await connection.simpleQuery(unsafeSQL: "ROLLBACK")
                #expect(try await connection.query("SELECT current_setting('application_name') AS name").single().decode("name", as: String.self) != "never")
            }
        }
    }
}
