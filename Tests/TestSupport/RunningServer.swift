import Foundation
import HabitSyncServer
import HabitSyncStore
import LibPQClient
import Logging
import Migrations
import ServiceLifecycle

/// The real application from `buildApplication`, serving on a free port for one test.
public struct RunningServer: Sendable {
    public let baseURL: String
    public let readiness: Readiness
    public let pool: PGPool
    public let metrics: ServerMetrics
    /// On Citus with `routeToNodes`: where each user's requests run (nil otherwise).
    public let userPools: UserPools?

    public static func with<T: Sendable>(
        database: TestDatabase, binaryHeadVersion: Int? = nil, configuration: ServerConfiguration = .forTests,
        poolSize: Int = 4, routeToNodes: Bool = false, _ body: (RunningServer) async throws -> T
    ) async throws -> T {
        // Through PgBouncer (HABITSYNC_TEST_PGBOUNCER=1) as `serve --request-database-url …
        // --request-pooling transaction --prepared-statements off` would (`on` from PgBouncer
        // 1.21: HABITSYNC_PGBOUNCER=<a build of it>); the realtime listener always connects
        // directly.
        let pooled = database.pooledConnectionString
        let named = pooled == nil || TestPostgres.pgBouncerTracksPreparedStatements
        let pool = PGPool(
            configuration: .init(
                connection: ServerConfiguration.requestConnection(
                    connectionString: pooled ?? database.connectionString, role: "habitsync_app",
                    transactionPooling: pooled != nil, namedPreparedStatements: named, distributed: TestPostgres.onCitus),
                maximumConnections: poolSize),
            logger: TestPostgres.logger)
        // As `serve --route-to-nodes on` does on a Citus coordinator reached directly.
        let userPools = (routeToNodes || TestPostgres.routeEveryServer) && TestPostgres.onCitus && pooled == nil ? UserPools(citusCoordinator: pool, logger: TestPostgres.logger) : nil
        let readiness = Readiness()
        let metrics = ServerMetrics()
        let (portStream, portContinuation) = AsyncStream<Int>.makeStream()
        var configuration = configuration
        configuration.port = 0
        let app = buildApplication(
            configuration: configuration, pool: pool, readiness: readiness, metrics: metrics,
            // The head of the repository's migrations, as `serve` computes it.
            binaryHeadVersion: try binaryHeadVersion ?? MigrationDirectory(url: TestPostgres.migrationsDirectory).headVersion, logger: TestPostgres.logger,
            listenerConnection: PGConnectionConfiguration(connectionString: database.connectionString), userPools: userPools,
            onServerRunning: { portContinuation.yield($0) })
        let group = ServiceGroup(services: [pool, app, readiness], logger: TestPostgres.logger)
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var port = 0
            for await bound in portStream {
                port = bound
                break
            }
            let server = RunningServer(baseURL: "http://127.0.0.1:\(port)", readiness: readiness, pool: pool, metrics: metrics, userPools: userPools)
            do {
                let result = try await body(server)
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
                await userPools?.close()
                await pool.shutdownThreads()
                return result
            } catch {
                await group.triggerGracefulShutdown()
                try? await tasks.waitForAll()
                await userPools?.close()
                await pool.shutdownThreads()
                throw error
            }
        }
    }

    public func get(_ path: String) async throws -> TestHTTP.Reply {
        try await TestHTTP.request("GET", baseURL + path)
    }
}

/// Checks the Prometheus text exposition format line by line; returns the samples.
public func parsePrometheusText(_ text: String) throws -> [String: Double] {
    struct Invalid: Error, CustomStringConvertible { let description: String }
    let name = #"[a-zA-Z_:][a-zA-Z0-9_:]*"#
    let label = #"[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*""#
    let sample = try Regex("^(\(name))(\\{(\(label))(,\(label))*\\})? (-?[0-9.eE+-]+|NaN|\\+Inf|-Inf)$")
    let help = try Regex("^# HELP \(name) .*$")
    let type = try Regex("^# TYPE \(name) (counter|gauge|histogram|summary|untyped)$")
    var samples: [String: Double] = [:]
    for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
        let line = String(line)
        if line.hasPrefix("#") {
            guard (try? help.wholeMatch(in: line)) != nil || (try? type.wholeMatch(in: line)) != nil else {
                throw Invalid(description: "bad comment line: \(line)")
            }
            continue
        }
        guard (try sample.wholeMatch(in: line)) != nil else { throw Invalid(description: "bad sample line: \(line)") }
        let parts = line.split(separator: " ")
        samples[String(parts.dropLast().joined(separator: " "))] = Double(parts.last!)
    }
    return samples
}
