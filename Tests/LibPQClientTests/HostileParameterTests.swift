import Foundation
import LibPQClient
import TestSupport
import Testing

/// What the client does with parameters libpq would mangle, and with a pool that stays busy.
@Suite struct HostileParameterTests {
    /// libpq reads text parameters as C strings: `"alice\0x"` would have been sent as `"alice"`.
    @Test func aTextParameterWithANULIsRefusedBeforeItIsSent() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        try await database.withPool(size: 1) { pool in
            try await pool.withConnection { connection in
                for text in ["alice\u{0}x", "\u{0}", "x\u{0}"] {
                    do {
                        _ = try await connection.query("SELECT \(text)::text AS t")
                        Issue.record("\(text.debugDescription) was sent")
                    } catch let error as PGError {
                        #expect(error.sqlState == .characterNotInRepertoire)
                        #expect(error.isDataError)
                        #expect(!error.description.contains("alice"), "no parameter values in errors")
                    }
                    do {
                        _ = try await connection.pipeline(["SELECT \(text)::text AS t"])
                        Issue.record("\(text.debugDescription) was sent in a pipeline")
                    } catch let error as PGError {
                        #expect(error.sqlState == .characterNotInRepertoire)
                    }
                }
                // Everything else, including other control characters, travels intact.
                let echoed = try await connection.query("SELECT \("a\u{1}b\n\u{7F}é")::text AS t").single().decode("t", as: String.self)
                #expect(echoed == "a\u{1}b\n\u{7F}é")
            }
        }
    }

    @Test func aLeaseThatWaitsPastItsTimeoutFails() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        let configuration = PGPool.Configuration(connection: .init(connectionString: database.connectionString), maximumConnections: 1, leaseTimeout: .milliseconds(200))
        try await PGPool.withPool(configuration, logger: TestPostgres.logger) { pool in
            try await pool.withConnection { _ in
                // The only connection is held for as long as the inner lease waits.
                do {
                    try await pool.withConnection { _ in Issue.record("got a second connection from a pool of one") }
                } catch let error as PGPool.LeaseTimeout {
                    #expect(error.waited == .milliseconds(200))
                }
            }
            #expect(pool.statistics.waiting == 0)
            // The pool serves again once the connection is back.
            let one = try await pool.withConnection { try await $0.query("SELECT 1 AS one").single().decode("one", as: Int.self) }
            #expect(one == 1)
        }
    }
}
