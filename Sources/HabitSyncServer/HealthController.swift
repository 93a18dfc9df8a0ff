import Foundation
import HTTPTypes
import HabitSyncDomain
import HabitSyncStore
import Hummingbird
import LibPQClient

/// `/livez` (and `/healthz`): the process answers. `/readyz`: not shutting down, the database
/// answers, and its schema is at or ahead of this binary's head; on Citus, which workers the
/// coordinator reaches (ready while any is: its users can be served). `/metrics`: Prometheus
/// text.
struct HealthController: Sendable {
    let pool: PGPool
    let readiness: Readiness
    let metrics: ServerMetrics
    let binaryHeadVersion: Int

    static let schemaVersionQuery: PGQuery = "SELECT coalesce(max(version), 0) AS version FROM habitsync_schema_migrations"

    func addRoutes(to router: Router<some RequestContext>) {
        router.get("livez") { _, _ in Self.json(.ok, ["status": "alive"]) }
        router.get("healthz") { _, _ in Self.json(.ok, ["status": "alive"]) }
        router.get("readyz") { _, _ in try await ready() }
        router.get("metrics") { _, _ in
            let version = try? await schemaVersion()
            if let workers = try? await DistributionStore(pool: pool).workerReachability() { metrics.recordWorkers(workers) }
            let body = metrics.render(pool: pool, schemaVersion: version, binaryHeadVersion: binaryHeadVersion)
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
    }

    private func ready() async throws -> Response {
        if readiness.isShuttingDown {
            return Self.notReady(["status": "shutting_down"])
        }
        let version: Int
        do {
            version = try await schemaVersion()
        } catch {
            return Self.notReady(["status": "database_unreachable"])
        }
        guard version >= binaryHeadVersion else {
            return Self.notReady(["status": "schema_behind", "schemaVersion": .number(Double(version)), "binaryHeadVersion": .number(Double(binaryHeadVersion))])
        }
        var body: [String: JSONValue] = ["status": "ready", "schemaVersion": .number(Double(version)), "binaryHeadVersion": .number(Double(binaryHeadVersion))]
        // The workers' probe is the newest word from the database: when it fails, the
        // database went away since the schema query (through PgBouncer that second query can
        // wait seconds for a server that is gone, and "ready" would then be stale).
        let workers: [DistributionStore.WorkerReachability]?
        do {
            workers = try await DistributionStore(pool: pool).workerReachability()
        } catch {
            return Self.notReady(["status": "database_unreachable"])
        }
        if let workers, !workers.isEmpty {
            body["workers"] = .object(Dictionary(workers.map { ($0.node, JSONValue.string($0.reachable ? "reachable" : "unreachable")) }) { first, _ in first })
            let unreachable = workers.filter { !$0.reachable }.count
            if unreachable == workers.count {
                body["status"] = "workers_unreachable"
                return Self.notReady(body)
            }
            if unreachable > 0 { body["status"] = "degraded" }
        }
        return Self.json(.ok, body)
    }

    private func schemaVersion() async throws -> Int {
        try await pool.withTransaction(readOnly: true, statementTimeout: .seconds(2)) { connection in
            try await connection.query(Self.schemaVersionQuery).single().decode("version", as: Int.self)
        }
    }

    static func json(_ status: HTTPResponse.Status, _ object: [String: JSONValue]) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: JSONValue.object(object).jsonText)))
    }

    /// Not ready: the status and retry hint of the error table's `notReady`.
    static func notReady(_ object: [String: JSONValue]) -> Response {
        var response = json(APIErrorKind.notReady.status, object)
        response.headers[.retryAfter] = String(APIErrorKind.notReady.retryAfterSeconds)
        return response
    }
}
