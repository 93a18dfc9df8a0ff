import Foundation
import LibPQClient

/// Housekeeping, tenant by tenant inside each tenant's RLS context: purges tombstones,
/// idempotency records and conflict-log rows past their retention, keeps usage-event
/// partitions ahead of time, and moves old ones to the `archive` schema.
public struct MaintenanceStore: Sendable {
    public struct Retention: Sendable {
        public var tombstones: TimeInterval
        public var pushBatches: TimeInterval
        public var conflicts: TimeInterval
        public var usageEvents: TimeInterval

        public init(tombstones: TimeInterval = 90 * 86_400, pushBatches: TimeInterval = 7 * 86_400, conflicts: TimeInterval = 90 * 86_400, usageEvents: TimeInterval = 90 * 86_400) {
            self.tombstones = tombstones
            self.pushBatches = pushBatches
            self.conflicts = conflicts
            self.usageEvents = usageEvents
        }
    }

    public struct Report: Sendable, Equatable {
        public var tenants = 0
        public var tombstonesPurged = 0
        public var pushBatchesPurged = 0
        public var conflictsPurged = 0
        public var partitionsCreated = 0
        public var partitionsArchived: [String] = []
    }

    public let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    static let tenantIDs: PGQuery = "SELECT id FROM tenants ORDER BY id"

    /// Tombstones of records nothing refers to; habits go after their reminders and progress.
    static func purgeTombstones(tables: [String], tenant: UUID, cutoff: Date, childrenOfHabits: Bool) -> PGQuery {
        let purges = tables.enumerated().map { index, table in
            let guardChildren = table == "habits" && childrenOfHabits
                ? " AND NOT EXISTS (SELECT 1 FROM reminders r WHERE r.tenant_id = t.tenant_id AND r.user_id = t.user_id AND r.habit_id = t.id) AND NOT EXISTS (SELECT 1 FROM daily_progress p WHERE p.tenant_id = t.tenant_id AND p.user_id = t.user_id AND p.habit_id = t.id)"
                : ""
            return "p\(index) AS (DELETE FROM \(table) t WHERE t.tenant_id = $1 AND t.deleted_at < $2\(guardChildren) RETURNING t.user_id, t.server_version)"
        }
        let union = tables.indices.map { "SELECT user_id, server_version FROM p\($0)" }.joined(separator: " UNION ALL ")
        return PGQuery(unsafeSQL: """
            WITH \(purges.joined(separator: ",\n")),
            purged AS (\(union)),
            horizon AS (SELECT user_id, max(server_version) AS version, count(*) AS purged FROM purged GROUP BY user_id),
            moved AS (
                UPDATE users u SET purged_through_version = greatest(u.purged_through_version, h.version)
                FROM horizon h WHERE u.tenant_id = $1 AND u.user_id = h.user_id
                RETURNING h.purged
            )
            SELECT coalesce(sum(purged), 0)::int8 AS purged FROM moved
            """, binds: [tenant.pgBind(), cutoff.pgBind()])
    }

    static func purgeBatches(tenant: UUID, cutoff: Date) -> PGQuery {
        "DELETE FROM push_batches WHERE tenant_id = \(tenant) AND created_at < \(cutoff)"
    }

    static func purgeConflicts(tenant: UUID, cutoff: Date) -> PGQuery {
        "DELETE FROM conflict_log WHERE tenant_id = \(tenant) AND logged_at < \(cutoff)"
    }

    static func ensurePartitions(now: Date) -> PGQuery {
        "SELECT habitsync_ensure_usage_event_partitions((\(now)::timestamptz AT TIME ZONE 'UTC')::date, ((\(now)::timestamptz AT TIME ZONE 'UTC') + interval '12 months')::date) AS created"
    }

    static let monthlyPartitions: PGQuery = """
        SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'usage_events'::regclass AND c.relname ~ '^usage_events_[0-9]{4}_[0-9]{2}$' ORDER BY c.relname
        """

    public func run(retention: Retention, now: Date = Date()) async throws -> Report {
        var report = Report()
        let tenants = try await pool.withConnection { try await $0.query(Self.tenantIDs).rows.map { try $0.decode("id", as: UUID.self) } }
        report.tenants = tenants.count
        for tenant in tenants {
            try await pool.withTransaction { connection in
                try await RequestScope.set(on: connection, tenantID: tenant, userID: nil)
                let cutoff = now.addingTimeInterval(-retention.tombstones)
                for (tables, children) in [(["reminders", "daily_progress", "focus_sessions", "selected_apps", "user_settings"], false), (["habits"], true)] {
                    report.tombstonesPurged += try await connection.query(Self.purgeTombstones(tables: tables, tenant: tenant, cutoff: cutoff, childrenOfHabits: children))
                        .single().decode("purged", as: Int.self)
                }
                report.pushBatchesPurged += try await connection.query(Self.purgeBatches(tenant: tenant, cutoff: now.addingTimeInterval(-retention.pushBatches))).affectedRows ?? 0
                report.conflictsPurged += try await connection.query(Self.purgeConflicts(tenant: tenant, cutoff: now.addingTimeInterval(-retention.conflicts))).affectedRows ?? 0
            }
        }
        try await pool.withTransaction { connection in
            report.partitionsCreated = try await connection.query(Self.ensurePartitions(now: now)).single().decode("created", as: Int.self)
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "UTC")!
            let cutoff = now.addingTimeInterval(-retention.usageEvents)
            for row in try await connection.query(Self.monthlyPartitions).rows {
                let name = try row.decode("relname", as: String.self)
                let parts = name.split(separator: "_").suffix(2).compactMap { Int($0) }
                guard parts.count == 2, let start = calendar.date(from: DateComponents(year: parts[0], month: parts[1], day: 1)),
                    let end = calendar.date(byAdding: .month, value: 1, to: start), end <= cutoff
                else { continue }
                // Names come from the catalog and match ^usage_events_[0-9]{4}_[0-9]{2}$.
                try await connection.simpleQuery(unsafeSQL: "ALTER TABLE usage_events DETACH PARTITION \(PGQuery.quoteIdentifier(name)); ALTER TABLE \(PGQuery.quoteIdentifier(name)) SET SCHEMA archive")
                report.partitionsArchived.append(name)
            }
        }
        return report
    }
}
