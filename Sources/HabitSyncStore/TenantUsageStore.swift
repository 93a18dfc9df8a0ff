import Foundation
import HabitSyncDomain
import LibPQClient

/// What a tenant used on a UTC day (`tenant_usage`, migration 0043): each replica's counts are
/// added to the day's row.
public struct TenantUsage: Sendable, Equatable {
    public var pushes: Int64 = 0
    public var changesReceived: Int64 = 0
    public var changesApplied: Int64 = 0
    public var pushesRefused: Int64 = 0
    public var pulls: Int64 = 0
    public var bytesIn: Int64 = 0
    public var bytesOut: Int64 = 0

    public init() {}

    public static func + (lhs: Self, rhs: Self) -> Self {
        var sum = lhs
        sum.pushes += rhs.pushes
        sum.changesReceived += rhs.changesReceived
        sum.changesApplied += rhs.changesApplied
        sum.pushesRefused += rhs.pushesRefused
        sum.pulls += rhs.pulls
        sum.bytesIn += rhs.bytesIn
        sum.bytesOut += rhs.bytesOut
        return sum
    }
}

/// The tenant usage table: a replica's counts added in one statement for every tenant and day
/// it counted; a tenant's days read back for the CLI and for the daily records limit.
public struct TenantUsageStore: Sendable {
    public let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    /// A tenant and UTC day counted.
    public struct Key: Hashable, Sendable {
        public let tenant: UUID
        public let day: LocalDate

        public init(tenant: UUID, day: LocalDate) {
            self.tenant = tenant
            self.day = day
        }
    }

    /// Adds every key's counts to its row; returns each row's changes received after. The time
    /// is a value, not now(): Citus takes only immutable functions in DO UPDATE.
    static func add(_ counts: [(key: Key, usage: TenantUsage)]) -> PGQuery {
        """
        INSERT INTO tenant_usage AS t (tenant_id, day, pushes, changes_received, changes_applied, pushes_refused, pulls, bytes_in, bytes_out, updated_at)
        SELECT c.*, \(Date())::timestamptz FROM unnest(\(counts.map(\.key.tenant))::uuid[], \(counts.map(\.key.day))::date[], \(counts.map(\.usage.pushes))::int8[],
                               \(counts.map(\.usage.changesReceived))::int8[], \(counts.map(\.usage.changesApplied))::int8[],
                               \(counts.map(\.usage.pushesRefused))::int8[], \(counts.map(\.usage.pulls))::int8[],
                               \(counts.map(\.usage.bytesIn))::int8[], \(counts.map(\.usage.bytesOut))::int8[])
                          AS c (tenant_id, day, pushes, changes_received, changes_applied, pushes_refused, pulls, bytes_in, bytes_out)
        ON CONFLICT (tenant_id, day) DO UPDATE SET
            pushes = t.pushes + EXCLUDED.pushes, changes_received = t.changes_received + EXCLUDED.changes_received,
            changes_applied = t.changes_applied + EXCLUDED.changes_applied, pushes_refused = t.pushes_refused + EXCLUDED.pushes_refused,
            pulls = t.pulls + EXCLUDED.pulls, bytes_in = t.bytes_in + EXCLUDED.bytes_in, bytes_out = t.bytes_out + EXCLUDED.bytes_out,
            updated_at = EXCLUDED.updated_at
        RETURNING t.tenant_id, t.day::text AS day, t.changes_received
        """
    }

    static func select(tenant: UUID, from: LocalDate, to: LocalDate) -> PGQuery {
        """
        SELECT day::text AS day, pushes, changes_received, changes_applied, pushes_refused, pulls, bytes_in, bytes_out
        FROM tenant_usage WHERE tenant_id = \(tenant) AND day BETWEEN \(from) AND \(to) ORDER BY day
        """
    }

    /// Which of `tenants` still exist (policy `meter_read` shows a flush every tenant): the
    /// counts of a tenant erased since they were made are dropped, not left failing the
    /// others' on the foreign key. Read apart from the insert, which Citus runs on the nodes.
    static func existing(_ tenants: [UUID]) -> PGQuery {
        "SELECT id FROM tenants WHERE id = ANY(\(tenants)::uuid[])"
    }

    /// The transaction of a flush: it writes several tenants' rows (policy `meter_write`).
    static let meterScope = [PGLocalSetting("habitsync.scope", "meter")]

    /// Adds `counts`; returns the changes received of each key's day after.
    public func add(_ counts: [(key: Key, usage: TenantUsage)]) async throws -> [Key: Int64] {
        guard !counts.isEmpty else { return [:] }
        return try await pool.withTransaction(localSettings: Self.meterScope) { connection in
            let existing = Set(try await connection.query(Self.existing(Array(Set(counts.map(\.key.tenant))))).rows.map { try $0.decode("id", as: UUID.self) })
            let kept = counts.filter { existing.contains($0.key.tenant) }
            guard !kept.isEmpty else { return [:] }
            var totals: [Key: Int64] = [:]
            for row in try await connection.query(Self.add(kept)).rows {
                guard let day = LocalDate(try row.decode("day", as: String.self)) else { continue }
                totals[Key(tenant: try row.decode("tenant_id", as: UUID.self), day: day)] = try row.decode("changes_received", as: Int64.self)
            }
            return totals
        }
    }

    /// The tenant's days from `from` to `to`, those with any use.
    public func usage(tenant: UUID, from: LocalDate, to: LocalDate) async throws -> [(day: LocalDate, usage: TenantUsage)] {
        try await pool.withTransaction(readOnly: true) { connection in
            try await RequestScope.set(on: connection, tenantID: tenant, userID: nil)
            return try await connection.query(Self.select(tenant: tenant, from: from, to: to)).rows.compactMap { row in
                guard let day = LocalDate(try row.decode("day", as: String.self)) else { return nil }
                var usage = TenantUsage()
                usage.pushes = try row.decode("pushes", as: Int64.self)
                usage.changesReceived = try row.decode("changes_received", as: Int64.self)
                usage.changesApplied = try row.decode("changes_applied", as: Int64.self)
                usage.pushesRefused = try row.decode("pushes_refused", as: Int64.self)
                usage.pulls = try row.decode("pulls", as: Int64.self)
                usage.bytesIn = try row.decode("bytes_in", as: Int64.self)
                usage.bytesOut = try row.decode("bytes_out", as: Int64.self)
                return (day, usage)
            }
        }
    }
}
