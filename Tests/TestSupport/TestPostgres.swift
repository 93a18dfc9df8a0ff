import EmbeddedPostgres
import Foundation
import HabitSyncServer
import HabitSyncStore
import LibPQClient
import Logging
import Migrations
import ServerHarness
import Synchronization

/// The test suite's real PostgreSQL server: `HABITSYNC_TEST_DATABASE_URL` when set (a role
/// allowed to create databases), otherwise a throwaway cluster of our own, started once per
/// test process under the temporary folder and stopped when the process exits.
///
/// Each test gets its own database, copied from a template that the real migrations built
/// once, so tests run in parallel without seeing each other's rows.
public actor TestPostgres {
    public static let shared = TestPostgres()
    /// The cluster this process started (none with HABITSYNC_TEST_DATABASE_URL), stopped at exit.
    static let cluster = Mutex<ThrowawayCluster?>(nil)
    /// With `HABITSYNC_TEST_PGBOUNCER=1`, every in-process server's requests go through this
    /// PgBouncer in transaction mode (`RunningServer`); stopped at exit.
    static let bouncer = Mutex<PgBouncerProcess?>(nil)
    /// The suite's PgBouncer is 1.21 or later, so servers send named statements through it.
    public static var pgBouncerTracksPreparedStatements: Bool { bouncer.withLock { $0?.tracksPreparedStatements ?? false } }
    public static let throughPgBouncer = ProcessInfo.processInfo.environment["HABITSYNC_TEST_PGBOUNCER"].map { !$0.isEmpty && $0 != "0" } ?? false
    /// With `HABITSYNC_TEST_CITUS_NODES=host:port,host:port,…` (the coordinator first, then
    /// its workers; user postgres, trusted: `scripts/test-citus`), every database is a
    /// distributed one on that Citus cluster, and servers use the distributed settings.
    public static let citusNodes: [String] = (ProcessInfo.processInfo.environment["HABITSYNC_TEST_CITUS_NODES"] ?? "")
        .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    public static var onCitus: Bool { !citusNodes.isEmpty }
    /// On Citus with HABITSYNC_TEST_CITUS_ROUTED=1, every test server runs as `serve
    /// --route-to-nodes on` (the sync suite against routing, not only `CitusRoutingTests`).
    public static let routeEveryServer: Bool = onCitus && ProcessInfo.processInfo.environment["HABITSYNC_TEST_CITUS_ROUTED"] == "1"
    /// With `HABITSYNC_TEST_CITUS_SPARE_NODE=host:port`: a running Citus node that is not a
    /// worker of any database yet, for the test that adds a worker (`scripts/test-citus`).
    public static let citusSpareNode: String? = onCitus ? ProcessInfo.processInfo.environment["HABITSYNC_TEST_CITUS_SPARE_NODE"].flatMap { $0.isEmpty ? nil : $0 } : nil
    /// Shards per distributed table in the tests' databases: enough to spread users over both
    /// workers, few enough to distribute the template quickly.
    public static let citusShardCount = 4

    // Tasks, not values: an actor method suspends at each await, and concurrent tests must
    // share the one start-up instead of racing to do it twice.
    private var serverTask: Task<Server, any Error>?
    private var templateTask: Task<Void, any Error>?
    private var counter = 0

    struct Server: Sendable {
        /// Connection string of a database to run CREATE DATABASE from.
        let admin: String
        let forDatabase: @Sendable (String) -> String
        /// On Citus, the workers' admin connection strings: every database is made on each node.
        var workerAdmins: [String] = []
        /// The same database through PgBouncer, when the suite runs through one.
        var pooledForDatabase: (@Sendable (String) -> String)? = nil
    }

    public static let logger: Logger = {
        var logger = Logger(label: "habitsync-tests")
        logger.logLevel = .warning
        return logger
    }()

    /// The repository's `migrations/` folder.
    public static let migrationsDirectory: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("migrations")

    static let templateName = "habitsync_test_template"

    /// A new, empty database (no migrations applied).
    public func emptyDatabase() async throws -> TestDatabase {
        let server = try await serverWithTemplate()
        let name = nextName()
        try await Self.admin(server) { try await $0.simpleQuery(unsafeSQL: "CREATE DATABASE \(PGQuery.quoteIdentifier(name))") }
        return TestDatabase(name: name, connectionString: server.forDatabase(name), pooledConnectionString: server.pooledForDatabase?(name))
    }

    /// A new database with every migration applied (and distributed, on Citus: the template is
    /// copied on every node, so the coordinator's metadata and the workers' shards match).
    public func migratedDatabase() async throws -> TestDatabase {
        let server = try await serverWithTemplate()
        let name = nextName()
        for admin in [server.admin] + server.workerAdmins {
            try await Self.admin(admin) {
                try await $0.simpleQuery(unsafeSQL: "CREATE DATABASE \(PGQuery.quoteIdentifier(name)) TEMPLATE \(Self.templateName)")
            }
        }
        return TestDatabase(name: name, connectionString: server.forDatabase(name), pooledConnectionString: server.pooledForDatabase?(name))
    }

    /// On Citus: a new database on every node with the extension and the workers added, every
    /// migration applied and nothing distributed yet (what `habitsync-server distribute` starts
    /// from). Elsewhere a migrated database.
    public func undistributedDatabase() async throws -> TestDatabase {
        guard Self.onCitus else { return try await migratedDatabase() }
        let server = try await serverWithTemplate()
        let name = nextName()
        for admin in [server.admin] + server.workerAdmins {
            try await Self.admin(admin) { try await $0.simpleQuery(unsafeSQL: "CREATE DATABASE \(PGQuery.quoteIdentifier(name))") }
        }
        try await Self.addCitusNodes(server, database: name)
        try await Self.migrate(server.forDatabase(name))
        return TestDatabase(name: name, connectionString: server.forDatabase(name))
    }

    /// Makes `database` on the spare node with the citus extension, as an operator prepares a
    /// new worker; returns the node's host and port for `citus_add_node`.
    public func prepareSpareNode(for database: TestDatabase) async throws -> (host: String, port: Int) {
        guard let spare = Self.citusSpareNode else { throw HarnessError("no spare Citus node (HABITSYNC_TEST_CITUS_SPARE_NODE)") }
        let (host, port) = Self.hostAndPort(spare)
        let conninfo = { (name: String) in "host=\(host) port=\(port) user=postgres dbname=\(name) \(HarnessConnectTimeout.keyword)" }
        try await Self.admin(conninfo("postgres")) { try await $0.simpleQuery(unsafeSQL: "CREATE DATABASE \(PGQuery.quoteIdentifier(database.name))") }
        try await Self.admin(conninfo(database.name)) { try await $0.simpleQuery(unsafeSQL: "CREATE EXTENSION citus") }
        // A copy of the template still names the template as its distributed database object,
        // and adding a node would send the new node commands for that database. An operator's
        // database is never such a copy.
        try await Self.admin(database.connectionString) {
            try await $0.simpleQuery(
                unsafeSQL: """
                    UPDATE pg_dist_object SET objid = (SELECT oid FROM pg_database WHERE datname = current_database())
                    WHERE classid = 'pg_database'::regclass
                    """)
        }
        return (host, port)
    }

    /// The server, once the migrated template exists. Every database waits for it, empty ones
    /// too: tests that migrate an empty database run 0001, whose role creation holds a lock
    /// until its transaction commits, and a template built beside several of them waited past
    /// its lock timeout on a busy machine (and failed every test that needed it). Built first,
    /// the roles exist before any other migration starts.
    private func serverWithTemplate() async throws -> Server {
        let server = try await startedServer()
        if templateTask == nil {
            templateTask = Task { try await Self.buildTemplate(server) }
        }
        try await templateTask!.value
        return server
    }

    /// Runs `body` on a connection to the server's admin database (terminate backends, …).
    @discardableResult
    public func withAdminConnection<T: Sendable>(_ body: @Sendable (PGConnection) async throws -> T) async throws -> T {
        try await Self.admin(try await startedServer(), body)
    }

    private func nextName() -> String {
        counter += 1
        return "habitsync_test_\(getpid())_\(counter)"
    }

    private static func buildTemplate(_ server: Server) async throws {
        for admin in [server.admin] + server.workerAdmins {
            try await Self.admin(admin) { connection in
                try await connection.simpleQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(Self.templateName) WITH (FORCE)")
                try await connection.simpleQuery(unsafeSQL: "CREATE DATABASE \(Self.templateName)")
            }
        }
        if onCitus { try await addCitusNodes(server, database: templateName) }
        try await migrate(server.forDatabase(Self.templateName))
        if onCitus {
            // What an operator runs (deploy/README.md): `habitsync-server distribute`.
            try await PGPool.withPool(.init(connection: .init(connectionString: server.forDatabase(Self.templateName)), maximumConnections: 1), logger: logger) { pool in
                _ = try await DistributionStore(pool: pool).distribute(shardCount: citusShardCount)
            }
        }
        if onCitus {
            // A template must have no connections when it is copied; Citus keeps some open
            // from the coordinator to the workers (and its maintenance daemon on each node).
            for admin in [server.admin] + server.workerAdmins {
                try await Self.admin(admin) { connection in
                    try await connection.simpleQuery(unsafeSQL: "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(Self.templateName)' AND pid <> pg_backend_pid()")
                }
            }
        }
    }

    /// Every migration, as `migrate up` applies them.
    private static func migrate(_ connectionString: String) async throws {
        let directory = try MigrationDirectory(url: Self.migrationsDirectory)
        try await PGPool.withPool(.init(connection: .init(connectionString: connectionString), maximumConnections: 1), logger: logger) { pool in
            // Nothing else migrates yet, but a lock timeout is not what this build tests.
            try await MigrationRunner(pool: pool, directory: directory, options: .init(lockTimeout: .seconds(300)), logger: logger).up()
        }
    }

    /// The citus extension in `database` on every node, and the workers added to it.
    private static func addCitusNodes(_ server: Server, database: String) async throws {
        for admin in server.workerAdmins {
            try await Self.admin(admin.replacingOccurrences(of: "dbname=postgres", with: "dbname=\(database)")) {
                try await $0.simpleQuery(unsafeSQL: "CREATE EXTENSION citus")
            }
        }
        try await PGPool.withPool(.init(connection: .init(connectionString: server.forDatabase(database)), maximumConnections: 1), logger: logger) { pool in
            try await pool.withConnection { connection in
                try await connection.simpleQuery(unsafeSQL: "CREATE EXTENSION citus")
                let (host, port) = hostAndPort(citusNodes[0])
                try await connection.query("SELECT citus_set_coordinator_host(\(host), \(port)::integer)")
                for worker in citusNodes.dropFirst() {
                    let (host, port) = hostAndPort(worker)
                    try await connection.query("SELECT citus_add_node(\(host), \(port)::integer)")
                }
            }
        }
    }

    public static func hostAndPort(_ node: String) -> (String, Int) {
        let parts = node.split(separator: ":")
        return (String(parts.first ?? "127.0.0.1"), parts.count > 1 ? Int(parts[1]) ?? 5432 : 5432)
    }

    private func startedServer() async throws -> Server {
        if serverTask == nil {
            serverTask = Task {
                if Self.onCitus {
                    let nodes = Self.citusNodes
                    let conninfo: @Sendable (String, String) -> String = { node, database in
                        let (host, port) = TestPostgres.hostAndPort(node)
                        return "host=\(host) port=\(port) user=postgres dbname=\(database) \(HarnessConnectTimeout.keyword)"
                    }
                    return Server(
                        admin: conninfo(nodes[0], "postgres"), forDatabase: { conninfo(nodes[0], $0) },
                        workerAdmins: nodes.dropFirst().map { conninfo($0, "postgres") })
                }
                if let url = ProcessInfo.processInfo.environment["HABITSYNC_TEST_DATABASE_URL"], !url.isEmpty {
                    // A key=value conninfo; a later dbname overrides the one it names.
                    return Server(admin: url, forDatabase: { "\(url) dbname=\($0)" })
                }
                // Tests run in parallel, each with its own pools and servers. On a loaded machine
                // more of them overlap: 600 was passed ("sorry, too many clients already") beside
                // `sha256sum /dev/zero`. Only connections in use cost a process.
                let cluster = try await ThrowawayCluster.start(prefix: "habitsync-tests", maxConnections: 1200, logger: Self.logger)
                Self.cluster.withLock { $0 = cluster }
                atexit { TestPostgres.cluster.withLock { $0?.stopImmediately() } }
                let running = cluster.running
                // No connect deadline a busy or stalled machine can pass (`HarnessConnectTimeout`).
                var server = Server(
                    admin: running.connectionString(database: "postgres") + " " + HarnessConnectTimeout.keyword,
                    forDatabase: { running.connectionString(database: $0) + " " + HarnessConnectTimeout.keyword })
                if Self.throughPgBouncer {
                    // Three server connections per database: fewer than a server's pool of four.
                    // A queue wait no busy machine reaches: with PgBouncer's 5 s, a request
                    // queued behind a slow export or erasure failed with 503 now and then.
                    let bouncer = try await PgBouncerProcess.start(
                        postgresPort: running.port, user: running.superuser, password: running.password, poolSize: 3,
                        queryWaitSeconds: 300)
                    Self.bouncer.withLock { $0 = bouncer }
                    atexit { TestPostgres.bouncer.withLock { $0?.stop() } }
                    server.pooledForDatabase = { bouncer.connectionString(database: $0) }
                }
                return server
            }
        }
        return try await serverTask!.value
    }

    /// A PgBouncer of its own (transaction mode, `poolSize` server connections per database)
    /// in front of this process's cluster; the caller stops it.
    public func pgBouncer(poolSize: Int) async throws -> PgBouncerProcess {
        _ = try await startedServer()
        guard let running = Self.cluster.withLock({ $0?.running }) else {
            throw HarnessError("the PgBouncer tests need the suite's own cluster (HABITSYNC_TEST_DATABASE_URL is set)")
        }
        // The same long queue wait as the suite's own PgBouncer: PgBouncer's first connection
        // to a new database took over 5 s once, beside other work, and failed the test with
        // `query_wait_timeout` (no test here waits on PgBouncer's own timeout).
        return try await PgBouncerProcess.start(
            postgresPort: running.port, user: running.superuser, password: running.password, poolSize: poolSize, queryWaitSeconds: 300)
    }

    @discardableResult
    static func admin<T: Sendable>(_ server: Server, _ body: (PGConnection) async throws -> T) async throws -> T {
        try await admin(server.admin, body)
    }

    @discardableResult
    static func admin<T: Sendable>(_ connectionString: String, _ body: (PGConnection) async throws -> T) async throws -> T {
        try await PGPool.withPool(.init(connection: .init(connectionString: connectionString), maximumConnections: 1), logger: logger) { pool in
            try await pool.withConnection(body)
        }
    }
}

public struct TestDatabase: Sendable {
    public let name: String
    public let connectionString: String
    /// Through PgBouncer in transaction mode, when the suite runs through one
    /// (`HABITSYNC_TEST_PGBOUNCER=1`); servers send their requests there.
    public var pooledConnectionString: String? = nil

    public init(name: String, connectionString: String, pooledConnectionString: String? = nil) {
        self.name = name
        self.connectionString = connectionString
        self.pooledConnectionString = pooledConnectionString
    }

    /// A pool on this database, as the tables' owner (`role` nil) or as another role.
    public func pool(size: Int = 4, role: String? = nil) -> PGPool {
        PGPool(configuration: .init(connection: connection(role: role), maximumConnections: size), logger: TestPostgres.logger)
    }

    /// Runs `body` with a pool that is closed afterwards.
    @discardableResult
    public func withPool<T: Sendable>(size: Int = 4, role: String? = nil, _ body: (PGPool) async throws -> T) async throws -> T {
        try await PGPool.withPool(.init(connection: connection(role: role), maximumConnections: size), logger: TestPostgres.logger, body)
    }

    /// On Citus, with the settings a server's request sessions have there (the request scope
    /// reaches the workers), so a test's own pool sees what the server sees.
    func connection(role: String?) -> PGConnectionConfiguration {
        .init(
            connectionString: connectionString, role: role,
            sessionSettings: TestPostgres.onCitus ? ServerConfiguration.distributedRequestSessionSettings : [:], localSettingsAsCommands: TestPostgres.onCitus)
    }
}
