import EmbeddedPostgres
import Foundation
import HabitSyncAuth
import HabitSyncStore
import LibPQClient
import Logging
import Migrations
import NIOPosix

/// The database a harness run (benchmark or fault suite) works on: `DATABASE_URL`, or a
/// PostgreSQL cluster of the run's own; migrated, with one fresh tenant. Its pool connects as
/// the login role (the schema owner), for seeding and for checking what was stored.
public final class HarnessDatabase {
    public let connectionString: String
    public let pool: PGPool
    public let tenant: UUID
    public let key: TenantKey
    private let cluster: ThrowawayCluster?

    public static let logger: Logger = {
        var logger = Logger(label: "habitsync-harness")
        logger.logLevel = .error
        return logger
    }()

    /// With no `databaseURL`, creates a cluster under `directory`. `durable: false` turns fsync
    /// off: fine while PostgreSQL itself is never crashed (the server may be; that is the point).
    public init(databaseURL: String?, directory: URL, migrationsDirectory: URL, maxConnections: Int = 200, durable: Bool = false) async throws {
        if let databaseURL {
            connectionString = databaseURL
            cluster = nil
        } else {
            let cluster = try await ThrowawayCluster.start(
                prefix: "habitsync-harness", databaseName: "habitsync", durable: durable, maxConnections: maxConnections,
                directory: directory.appendingPathComponent("postgres"), logger: Self.logger)
            connectionString = cluster.running.connectionString
            self.cluster = cluster
        }
        // The harness's own checks wait as long as connecting takes on a busy machine; the
        // servers under test keep their configured timeout.
        pool = PGPool(
            configuration: .init(
                connection: .init(connectionString: connectionString, applicationName: "habitsync-harness", connectTimeoutSeconds: 120),
                maximumConnections: 20), logger: Self.logger)
        try await MigrationRunner(pool: pool, directory: try MigrationDirectory(url: migrationsDirectory), logger: Self.logger).up()
        key = TenantKey.generatedSecret()
        tenant = try await TenantStore(pool: pool).create(name: "harness-\(UUID().uuidString.prefix(8))", key: key).id
    }

    /// An access token for `user` of the run's tenant.
    public func token(user: String) async throws -> String {
        try await TokenMinter.mint(tenantID: tenant, userID: user, key: key, ttl: 7200)
    }

    /// Stops the run's own cluster (`pg_ctl stop -m fast`: sessions are cut, as in an outage).
    public func stopCluster() async throws {
        guard let cluster else { throw HarnessError("the database outage needs a cluster of the run's own; unset DATABASE_URL") }
        try await cluster.pause()
    }

    /// Starts the run's own cluster again, on the port it had.
    public func startCluster() async throws {
        guard let cluster else { throw HarnessError("the database outage needs a cluster of the run's own; unset DATABASE_URL") }
        try await cluster.resume()
    }

    public var ownsCluster: Bool { cluster != nil }

    /// A PgBouncer in transaction mode in front of the run's own cluster, and the connection
    /// string of this database through it. The caller stops it.
    public func pgBouncer(poolSize: Int) async throws -> (PgBouncerProcess, connectionString: String) {
        guard let cluster else { throw HarnessError("PgBouncer needs a cluster of the run's own; unset DATABASE_URL") }
        let running = cluster.running
        let bouncer = try await PgBouncerProcess.start(postgresPort: running.port, user: running.superuser, password: running.password, poolSize: poolSize)
        return (bouncer, bouncer.connectionString(database: "habitsync"))
    }

    public func close() async {
        pool.close()
        await pool.shutdownThreads()
        await cluster?.stop()
    }
}
