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
