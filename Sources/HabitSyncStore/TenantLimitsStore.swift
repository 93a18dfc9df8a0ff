import Foundation
import HabitSyncDomain
import LibPQClient

/// A tenant's quotas (`tenant_limits`, migration 0042) and what they are measured against:
/// set by admins (`tenant set-limits`), read by every replica for its requests in the tenant's
/// row-level security context.
public struct TenantLimitsStore: Sendable {
    public let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    /// The table's column of each kind.
    static func column(_ kind: TenantLimits.Kind) -> PGFragment {
        switch kind {
        case .pushesPerSecond: "pushes_per_second"
        case .recordsPerSecond: "records_per_second"
        case .recordsPerDay: "records_per_day"
        case .streams: "streams"
        case .storageRows: "storage_rows"
        }
    }

    static func selectLimits(tenantID: UUID) -> PGQuery {
        "SELECT \(TenantLimits.Kind.allCases.map(column).joined(separator: ", ")) FROM tenant_limits WHERE tenant_id = \(tenantID)"
    }

    /// Every column written: the limits merged in Swift from the stored ones and the change.
    static func upsertLimits(tenantID: UUID, _ limits: TenantLimits) -> PGQuery {
        let kinds = TenantLimits.Kind.allCases
        let columns: PGFragment = kinds.map(column).joined(separator: ", ")
        let values: PGQuery = kinds.map { "\(limits[$0])" as PGQuery }.joined(separator: ", ")
        let updates: PGFragment = kinds.map { "\(column($0)) = EXCLUDED.\(column($0))" as PGFragment }.joined(separator: ", ")
        // The time as a value, not now(): Citus takes only immutable functions in DO UPDATE.
        return """
            INSERT INTO tenant_limits (tenant_id, \(columns), updated_at) VALUES (\(tenantID), \(values), \(Date()))
            ON CONFLICT (tenant_id) DO UPDATE SET \(updates), updated_at = EXCLUDED.updated_at
            """
    }

    /// The rows a tenant stores: every user's live records (the digests' counts, kept by
    /// triggers) and usage events. Reads one row per user and the tenant's usage event ids.
    static func storedRows(tenantID: UUID) -> PGQuery {
        """
        SELECT ((SELECT coalesce(sum((d.value ->> 'count')::bigint), 0) FROM users u CROSS JOIN LATERAL jsonb_each(u.record_digests) d
                 WHERE u.tenant_id = \(tenantID))
              + (SELECT count(*) FROM usage_event_ids e WHERE e.tenant_id = \(tenantID)))::bigint AS stored
        """
    }

    private static func limits(from row: PGRow?) throws -> TenantLimits {
        var limits = TenantLimits()
        guard let row else { return limits }
        for kind in TenantLimits.Kind.allCases { limits[kind] = try row.decodeIfPresent(column(kind).sql, as: Int64.self) }
        return limits
    }

    /// The tenant's limits now (none set: empty).
    public func limits(tenantID: UUID) async throws -> TenantLimits {
        try await pool.withTransaction(readOnly: true) { connection in
            try await RequestScope.set(on: connection, tenantID: tenantID, userID: nil)
            return try Self.limits(from: try await connection.query(Self.selectLimits(tenantID: tenantID)).rows.first)
        }
    }

    /// Sets the kinds `changes` names (nil: no limit of that kind) and keeps the others;
    /// returns the tenant's limits after.
    public func setLimits(tenantID: UUID, _ changes: [TenantLimits.Kind: Int64?]) async throws -> TenantLimits {
        try await pool.withTransaction { connection in
            try await RequestScope.set(on: connection, tenantID: tenantID, userID: nil)
            var limits = try Self.limits(from: try await connection.query(Self.selectLimits(tenantID: tenantID)).rows.first)
            for (kind, value) in changes { limits[kind] = value }
            try await connection.query(Self.upsertLimits(tenantID: tenantID, limits))
            return limits
        }
    }

    /// The rows the tenant stores now (`storedRows`).
    public func storedRows(tenantID: UUID) async throws -> Int64 {
        try await pool.withTransaction(readOnly: true) { connection in
            try await RequestScope.set(on: connection, tenantID: tenantID, userID: nil)
            return try await connection.query(Self.storedRows(tenantID: tenantID)).single().decode("stored", as: Int64.self)
        }
    }
}
