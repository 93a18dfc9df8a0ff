import Foundation
import HabitSyncServer
import LibPQClient
import ServerHarness
import TestSupport
import Testing

/// Through PgBouncer in transaction mode with one server connection, so every client shares
/// it: the request pool's role and settings live and die with each transaction, and
/// statements go unnamed (or named, from PgBouncer 1.21). (The sync suite itself runs through
/// PgBouncer too, on CI: `HABITSYNC_TEST_PGBOUNCER=1`.)
@Suite(.disabled(if: TestPostgres.onCitus, "PgBouncer runs in front of the suite's own cluster")) struct PgBouncerTests {
    static func pools(_ url: String, namedPreparedStatements: Bool = false) -> (requests: PGPool, other: PGPool) {
        let requests = PGPool(
            configuration: .init(
                connection: ServerConfiguration.requestConnection(
                    connectionString: url, role: "habitsync_app", transactionPooling: true, namedPreparedStatements: namedPreparedStatements), maximumConnections: 2),
            logger: TestPostgres.logger)
        // Another client of the same pooler and database: maintenance, a migration, a tool.
        let other = PGPool(
            configuration: .init(connection: .init(connectionString: url, transactionPooling: true, namedPreparedStatements: false), maximumConnections: 2),
            logger: TestPostgres.logger)
        return (requests, other)
    }

    /// Closes the pools and stops their threads (in the background: a `defer` cannot wait).
    static func release(_ pools: [PGPool]) {
        for pool in pools { pool.close() }
        Task { for pool in pools { await pool.shutdownThreads() } }
    }

    static let whoAmI: PGQuery = "SELECT current_user::text AS role, session_user::text AS login, current_setting('jit') AS jit, current_setting('TimeZone') AS zone, pg_backend_pid() AS pid"

    @Test func theRequestRoleAndSettingsDoNotLeakToAnotherClientOfTheServerConnection() async throws {
        let database = try await TestPostgres.shared.migratedDatabase()
        let bouncer = try await TestPostgres.shared.pgBouncer(poolSize: 1)
        defer { bouncer.stop() }
        let (requests, other) = Self.pools(bouncer.connectionString(database: database.name))
        defer { Self.release([requests, other]) }
        var backends = Set<Int32>()
        for _ in 0..<10 {
            let request = try await requests.withTransaction { try await $0.query(Self.whoAmI).single() }
            #expect(try request.decode("role", as: String.self) == "habitsync_app")
            #expect(try request.decode("jit", as: String.self) == "off" && request.decode("zone", as: String.self) == "UTC")
            let tool = try await other.withConnection { try await $0.query(Self.whoAmI).single() }
            #expect(try tool.decode("role", as: String.self) == tool.decode("login", as: String.self), "the request role leaked to another client")
            #expect(try tool.decode("jit", as: String.self) == "on", "a request setting leaked to another client")
            backends.insert(try request.decode("pid", as: Int32.self))
            backends.insert(try tool.decode("pid", as: Int32.self))
        }
        #expect(backends.count == 1, "both clients ran on PgBouncer's one server connection")

        // The check can fail: a role set on the session, as the server did before, is seen by
        // the next client of the server connection.
        try await other.withConnection { _ = try await $0.simpleQuery(unsafeSQL: "SET ROLE habitsync_app") }
        let leaked = try await other.withConnection { try await $0.query(Self.whoAmI).single() }
        #expect(try leaked.decode("role", as: String.self) == "habitsync_app")
        try await other.withConnection { _ = try await $0.simpleQuery(unsafeSQL: "RESET ROLE") }
    }

    /// Debian 12's PgBouncer is 1.18, where named statements break; with
    /// `HABITSYNC_PGBOUNCER` set to a build of 1.21 or later they must work.
    @Test func namedStatementsBreakBeforePgBouncer121AndWorkFromItAndUnnamedOnesAlwaysWork() async throws {
        let database = try await TestPostgres.shared.migratedDatabase()
        let bouncer = try await TestPostgres.shared.pgBouncer(poolSize: 1)
        defer { bouncer.stop() }
        let url = bouncer.connectionString(database: database.name)
        let named = Self.pools(url, namedPreparedStatements: true).requests, another = Self.pools(url, namedPreparedStatements: true).requests
        defer { Self.release([named, another]) }
        // Two clients each prepare their first statement as hs_0 on the one server connection.
        _ = try await named.withTransaction { try await $0.query("SELECT 1 AS one") }
        if bouncer.tracksPreparedStatements {
            // PgBouncer renames them on the server connection: each client gets its own
            // statement back, the second and third time too (prepared once per client).
            for _ in 0..<3 {
                #expect(try await another.withTransaction { try await $0.query("SELECT 2 AS two").single().decode("two", as: Int.self) } == 2)
                #expect(try await named.withTransaction { try await $0.query("SELECT 1 AS one").single().decode("one", as: Int.self) } == 1)
            }
        } else {
            await #expect(throws: PGError.self) { _ = try await another.withTransaction { try await $0.query("SELECT 2 AS two") } }
        }
        let (unnamed, secondUnnamed) = (Self.pools(url).requests, Self.pools(url).requests)
        defer { Self.release([unnamed, secondUnnamed]) }
        for pool in [unnamed, secondUnnamed, unnamed] {
            #expect(try await pool.withTransaction { try await $0.query("SELECT 3 AS three").single().decode("three", as: Int.self) } == 3)
        }
    }
}
