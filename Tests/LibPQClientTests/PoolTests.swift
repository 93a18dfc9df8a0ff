import Foundation
import LibPQClient
import Synchronization
import TestSupport
import Testing

@Suite struct PoolTests {
    @Test func sessionSettingsApplyToEverySessionAndNothingElse() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        let configuration = PGPool.Configuration(
            connection: .init(connectionString: database.connectionString, sessionSettings: ["max_parallel_workers_per_gather": "0", "jit": "off"]),
            maximumConnections: 2)
        try await PGPool.withPool(configuration, logger: TestPostgres.logger) { pool in
            // Both connections in use at once: each task keeps its connection until both have
            // one (a sleep could end before a busy machine starts the other task).
            let leased = LeaseCount()
            try await withThrowingTaskGroup(of: (String, String).self) { group in
                for _ in 0..<2 {
                    group.addTask {
                        try await pool.withConnection { connection in
                            leased.value.add(1, ordering: .relaxed)
                            for _ in 0..<6000 where leased.value.load(ordering: .relaxed) < 2 { try await Task.sleep(for: .milliseconds(5)) }
                            let row = try await connection.query("SELECT current_setting('max_parallel_workers_per_gather') AS workers, current_setting('jit') AS jit").single()
                            return (try row.decode("workers", as: String.self), try row.decode("jit", as: String.self))
                        }
                    }
                }
                for try await (workers, jit) in group {
                    #expect(workers == "0" && jit == "off")
                }
            }
            #expect(pool.statistics.open == 2)
        }
        // A pool without settings keeps the server's defaults.
        try await database.withPool(size: 1) { pool in
            let workers = try await pool.withConnection { try await $0.query("SELECT current_setting('max_parallel_workers_per_gather') AS w").single().decode("w", as: String.self) }
            #expect(workers != "0")
        }
    }

    /// A pool with a request role runs its transactions as that role; `role: .login` runs one
    /// as the login role, and the next transaction on the same connection is the request
    /// role's again (the switch was `SET LOCAL`).
    @Test func aTransactionCanRunAsTheLoginRoleForItselfOnly() async throws {
        let database = try await TestPostgres.shared.migratedDatabase()
        try await database.withPool(size: 1, role: "habitsync_app") { pool in
            func role(_ choice: TransactionRole) async throws -> (current: String, session: String) {
                try await pool.withTransaction(role: choice) { connection in
                    let row = try await connection.query("SELECT current_user::text AS current, session_user::text AS session").single()
                    return (try row.decode("current", as: String.self), try row.decode("session", as: String.self))
                }
            }
            let request = try await role(.configured)
            #expect(request.current == "habitsync_app")
            #expect(request.session != "habitsync_app")
            let login = try await role(.login)
            #expect(login.current == request.session)
            #expect(try await role(.configured).current == "habitsync_app")
            // A statement outside a transaction has the session's role: still the request role.
            #expect(try await pool.withConnection { try await $0.query("SELECT current_user::text AS r").single().decode("r", as: String.self) } == "habitsync_app")
            #expect(pool.statistics.open == 1)
        }
    }

    @Test func anExhaustedPoolMakesALeaseWaitThenProceed() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        try await database.withPool(size: 1) { pool in
            let events = EventLog()
            try await withThrowingTaskGroup(of: Void.self) { group in
                let holderHasConnection = AsyncStream<Void>.makeStream()
                let release = AsyncStream<Void>.makeStream()
                // The holder keeps the only connection until the test has seen the waiter
                // queued: no race with how fast a busy machine starts the waiter.
                group.addTask {
                    try await pool.withConnection { connection in
                        events.append("holder leased")
                        holderHasConnection.continuation.yield()
                        for await _ in release.stream { break }
                        _ = try await connection.query("SELECT 1")
                        events.append("holder released")
                    }
                }
                for await _ in holderHasConnection.stream { break }
                group.addTask {
                    try await pool.withConnection { _ in events.append("waiter leased") }
                }
                var sawWaiting = false
                for _ in 0..<6000 where !sawWaiting {
                    sawWaiting = pool.statistics.waiting == 1
                    if !sawWaiting { try await Task.sleep(for: .milliseconds(5)) }
                }
                release.continuation.yield()
                #expect(sawWaiting)
                try await group.waitForAll()
            }
            #expect(events.entries == ["holder leased", "holder released", "waiter leased"])
            #expect(pool.statistics.open == 1)
            #expect(pool.statistics.waiting == 0)
        }
    }

    /// Waits until a terminated backend is really gone: out of pg_stat_activity, which it
    /// leaves before it exits, and, when the server runs on this machine, exited, which is when
    /// its socket closes and the client can notice.
    static func waitUntilGone(_ pid: Int32, admin: PGConnection) async throws {
        for _ in 0..<200 {
            let listed = try await admin.query("SELECT count(*) AS n FROM pg_stat_activity WHERE pid = \(pid)").single().decode("n", as: Int.self)
            let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
            let running = stat.map { !$0.contains(") Z ") } ?? false
            if listed == 0 && !running { return }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    @Test func aTerminatedBackendIsReplacedTransparentlyOnTheNextLease() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        try await database.withPool(size: 1) { pool in
            let firstPID = try await pool.withConnection { $0.backendPID }
            try await TestPostgres.shared.withAdminConnection { admin in
                let terminated = try await admin.query("SELECT pg_terminate_backend(\(firstPID)) AS done").single().decode("done", as: Bool.self)
                #expect(terminated)
                try await Self.waitUntilGone(firstPID, admin: admin)
            }
            // Both a plain lease and a transaction work at once, on a new backend.
            let (secondPID, answer) = try await pool.withConnection { connection in
                (connection.backendPID, try await connection.query("SELECT 1 AS one").single().decode("one", as: Int.self))
            }
            #expect(answer == 1)
            #expect(secondPID != firstPID)
            #expect(pool.statistics.errors >= 1)
            #expect(pool.statistics.open == 1)

            try await TestPostgres.shared.withAdminConnection { admin in
                _ = try await admin.query("SELECT pg_terminate_backend(\(secondPID))")
                try await Self.waitUntilGone(secondPID, admin: admin)
            }
            let inTransaction = try await pool.withTransaction { try await $0.query("SELECT 2 AS two").single().decode("two", as: Int.self) }
            #expect(inTransaction == 2)
        }
    }

    @Test func aBrokenConnectionIsNeverReturnedToThePool() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        try await database.withPool(size: 2) { pool in
            // A connection killed *while in use* fails that call and is discarded at release.
            await #expect(throws: PGError.self) {
                try await pool.withConnection { connection in
                    _ = try await connection.query("SELECT pg_terminate_backend(pg_backend_pid())")
                }
            }
            #expect(pool.statistics.open == 0)
            #expect(pool.statistics.idle == 0)
            let answer = try await pool.withConnection { try await $0.query("SELECT 3 AS three").single().decode("three", as: Int.self) }
            #expect(answer == 3)
        }
    }

    @Test func aStatementPastItsTimeoutFailsWith57014AndTheTimeoutEndsWithTheTransaction() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        try await database.withPool(size: 1) { pool in
            await #expect {
                try await pool.withTransaction(statementTimeout: .milliseconds(200)) { try await $0.query("SELECT pg_sleep(3)") }
            } throws: { ($0 as? PGError)?.sqlState == .queryCanceled }
            // Same (only) connection, new transaction: the 200 ms limit is gone.
            let slept = try await pool.withTransaction { connection in
                try await connection.query("SELECT pg_sleep(0.4)")
                return try await connection.query("SELECT current_setting('statement_timeout') AS timeout").single().decode("timeout", as: String.self)
            }
            #expect(slept == "0")
            #expect(pool.statistics.open == 1)
        }
    }

    @Test func manyConcurrentTransactionsShareASmallPool() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        try await database.withPool(size: 3) { pool in
            _ = try await pool.withConnection { try await $0.query("CREATE TABLE counter (n int NOT NULL)") }
            _ = try await pool.withConnection { try await $0.query("INSERT INTO counter VALUES (0)") }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<40 {
                    group.addTask {
                        _ = try await pool.withTransaction { try await $0.query("UPDATE counter SET n = n + 1") }
                    }
                }
                try await group.waitForAll()
            }
            let total = try await pool.withConnection { try await $0.query("SELECT n FROM counter").single().decode("n", as: Int.self) }
            #expect(total == 40)
            #expect(pool.statistics.open <= 3)
        }
    }

    @Test func aClosedPoolRefusesLeases() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        let pool = database.pool(size: 1)
        try await pool.withConnection { _ in }
        pool.close()
        await #expect { try await pool.withConnection { _ in } } throws: { ($0 as? PGError)?.kind == .client }
        await pool.shutdownThreads()
    }
}

/// Events in the order concurrent tasks recorded them.
final class EventLog: Sendable {
    private let storage = Mutex<[String]>([])
    func append(_ event: String) { storage.withLock { $0.append(event) } }
    var entries: [String] { storage.withLock { $0 } }
}

@Suite struct PreparedStatementTests {
    @Test func statementsArePreparedOncePerSessionAndSurviveErrors() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        try await database.withPool(size: 1) { pool in
            try await pool.withConnection { connection in
                for n in 0..<5 {
                    let value = try await connection.query("SELECT \(n)::int AS n, \("x")::text AS t").single().decode("n", as: Int.self)
                    #expect(value == n)
                }
                // The same text with other parameter types is another statement.
                #expect(try await connection.query("SELECT \(Int32(3))::int AS n, \("y")::text AS t").single().decode("n", as: Int.self) == 3)
                let prepared = try await connection.query("SELECT count(*) AS n FROM pg_prepared_statements").single().decode("n", as: Int.self)
                #expect(prepared == 3, "one per distinct statement and parameter types, this query included")
                await #expect(throws: PGError.self) { try await connection.query("SELECT \(1) / 0 AS boom") }
                #expect(try await connection.query("SELECT \(7)::int AS n, \("z")::text AS t").single().decode("n", as: Int.self) == 7)
            }
        }
    }
}

/// How many tasks hold a connection, shared between them.
final class LeaseCount: Sendable {
    let value = Atomic<Int>(0)
}
