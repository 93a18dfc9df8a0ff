import LibPQClient

/// The Citus layout of the schema (deploy/README.md, "Citus"): whether the database is a Citus
/// coordinator, and turning a migrated database into a distributed one
/// (`habitsync_distribute`, migrations 0016 and 0020). Runs as a superuser.
public struct DistributionStore: Sendable {
    /// One object `distribute` changed, and what it became.
    public struct Step: Sendable, Equatable {
        public let relation: String
        public let became: String
    }

    public let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    static let citusInstalled: PGQuery = "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') AS installed"

    static func distribute(shardCount: Int?) -> PGQuery {
        "SELECT relation, became FROM habitsync_distribute(\(shardCount)::integer)"
    }

    /// The database has the citus extension: its request sessions need Citus' settings
    /// (`ServerConfiguration.requestConnection(distributed:)`).
    public func isCitus() async throws -> Bool {
        try await pool.withConnection { try await $0.query(Self.citusInstalled).single().decode("installed") }
    }

    /// Distributes what is not distributed yet, rows included, in one transaction; an empty
    /// answer means it already was. Fails with `feature_not_supported` without the citus
    /// extension, `insufficient_privilege` for a role row-level security filters, and
    /// `data_exception` if a table's rows would not all arrive once (then nothing changed).
    public func distribute(shardCount: Int?) async throws -> [Step] {
        try await pool.withTransaction { connection in
            try await connection.query(Self.distribute(shardCount: shardCount)).rows.map {
                Step(relation: try $0.decode("relation"), became: try $0.decode("became"))
            }
        }
    }
}

extension DistributionStore {
    /// One Citus worker, and whether the coordinator reached it just now.
    public struct WorkerReachability: Sendable, Equatable {
        /// `host:port`, as `pg_dist_node` names it.
        public let node: String
        public let reachable: Bool
    }

    static let workers: PGQuery = """
        SELECT nodename || ':' || nodeport AS node, citus_check_connection_to_node(nodename, nodeport) AS reachable
        FROM pg_dist_node WHERE isactive AND noderole = 'primary' AND groupid <> 0 ORDER BY nodename, nodeport
        """

    /// Whether the database is a Citus coordinator (the request role can ask this too).
    static let hasWorkerCatalog: PGQuery = "SELECT to_regclass('pg_catalog.pg_dist_node') IS NOT NULL AS citus"

    /// Each worker and whether the coordinator can open a connection to it, each within
    /// `connectTimeout` (a worker that is down refuses at once; an unreachable host waits out
    /// the timeout). Nil when the database is not a Citus coordinator. Runs as any role.
    public func workerReachability(connectTimeout: Duration = .seconds(5)) async throws -> [WorkerReachability]? {
        let milliseconds = max(1, Int64(connectTimeout / .milliseconds(1)))
        return try await pool.withTransaction(readOnly: true, statementTimeout: connectTimeout * 4) { connection in
            guard try await connection.query(Self.hasWorkerCatalog).single().decode("citus", as: Bool.self) else { return nil }
            try await connection.query("SELECT set_config('citus.node_connection_timeout', \(String(milliseconds)), true)")
            return try await connection.query(Self.workers).rows.map {
                WorkerReachability(node: try $0.decode("node"), reachable: try $0.decode("reachable"))
            }
        }
    }
}
