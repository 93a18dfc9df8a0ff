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
        /// Months due for the archive whose detach could not get its lock in time.
        public var partitionsDeferred: [String] = []
        /// Usage events moved out of the DEFAULT partition into their month's.
        public var defaultPartitionRowsMoved = 0
        /// Users whose tombstones wait for the next run because a push held their lock.
        public var usersSkippedBusy = 0
    }

    public let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    static let tenantIDs: PGQuery = "SELECT id FROM tenants ORDER BY id"

    static let purgeTables: [PGFragment] = ["reminders", "daily_progress", "focus_sessions", "selected_apps", "user_settings", "habits"]

    /// Whether user `u` has a tombstone older than `cutoff` in any purged table.
    static func hasTombstones(before cutoff: Date) -> PGQuery {
        purgeTables.map { table -> PGQuery in
            "EXISTS (SELECT 1 FROM \(table) t WHERE t.tenant_id = u.tenant_id AND t.user_id = u.user_id AND t.deleted_at < \(cutoff))"
        }.joined(separator: " OR ")
    }

    /// The users with tombstones past the cutoff, row-locked in the order a push locks: the
    /// user row first, then data rows. Users a push holds right now are skipped (SKIP LOCKED)
    /// and purged by the next run, so maintenance neither waits for pushes nor deadlocks them.
    static func lockUsersWithTombstones(tenant: UUID, cutoff: Date) -> PGQuery {
        """
        SELECT u.user_id FROM users u
        WHERE u.tenant_id = \(tenant) AND (\(hasTombstones(before: cutoff)))
        ORDER BY u.user_id FOR UPDATE OF u SKIP LOCKED
        """
    }

    /// The same, without locks (Citus: each is then locked on its own shard).
    static func usersWithTombstones(tenant: UUID, cutoff: Date) -> PGQuery {
        "SELECT u.user_id FROM users u WHERE u.tenant_id = \(tenant) AND (\(hasTombstones(before: cutoff))) ORDER BY u.user_id"
    }

    static func lockUser(tenant: UUID, user: String) -> PGQuery {
        "SELECT user_id FROM users WHERE tenant_id = \(tenant) AND user_id = \(user) FOR UPDATE SKIP LOCKED"
    }

    static func countUsersWithTombstones(tenant: UUID, cutoff: Date) -> PGQuery {
        "SELECT count(*)::int8 AS n FROM users u WHERE u.tenant_id = \(tenant) AND (\(hasTombstones(before: cutoff)))"
    }

    /// Tombstones of records nothing refers to, of the locked users only; habits go after
    /// their reminders and progress.
    static func purgeTombstones(tables: [PGFragment], tenant: UUID, cutoff: Date, users: [String], childrenOfHabits: Bool) -> PGQuery {
        let purges = tables.enumerated().map { index, table -> PGQuery in
            let guardChildren: PGFragment =
                table == "habits" && childrenOfHabits
                ? " AND NOT EXISTS (SELECT 1 FROM reminders r WHERE r.tenant_id = t.tenant_id AND r.user_id = t.user_id AND r.habit_id = t.id) AND NOT EXISTS (SELECT 1 FROM daily_progress p WHERE p.tenant_id = t.tenant_id AND p.user_id = t.user_id AND p.habit_id = t.id)"
                : ""
            let name: PGFragment = "p\(index)"
            return """
                \(name) AS (DELETE FROM \(table) t WHERE t.tenant_id = \(tenant) AND t.user_id = ANY(\(users)::text[])
                    AND t.deleted_at < \(cutoff)\(guardChildren) RETURNING t.user_id, t.server_version)
                """
        }
        let union = tables.indices.map { "SELECT user_id, server_version FROM p\($0)" as PGFragment }.joined(separator: " UNION ALL ")
        return """
            WITH \(purges.joined(separator: ",\n")),
            purged AS (\(union)),
            horizon AS (SELECT user_id, max(server_version) AS version, count(*) AS purged FROM purged GROUP BY user_id),
            moved AS (
                UPDATE users u SET purged_through_version = greatest(u.purged_through_version, h.version)
                FROM horizon h WHERE u.tenant_id = \(tenant) AND u.user_id = h.user_id
                RETURNING h.purged
            )
            SELECT coalesce(sum(purged), 0)::int8 AS purged FROM moved
            """
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

    /// How long archiving one month may wait for the pushes in flight.
    static let archiveLockTimeout: Duration = .seconds(2)
    static let savepoint: PGQuery = "SAVEPOINT archive_month"
    static let releaseSavepoint: PGQuery = "RELEASE SAVEPOINT archive_month"
    static let rollbackToSavepoint: PGQuery = "ROLLBACK TO SAVEPOINT archive_month"

    static let moveDefaultPartitionRows: PGQuery = "SELECT habitsync_move_default_usage_events() AS moved"
    /// On Citus, partition DDL (create, attach, detach) after a partition's foreign key to a
    /// reference table was created in the same transaction fails when Citus ran the shards'
    /// DDL over several connections per worker — which it does when tasks are slow, so on a
    /// busy machine. One connection per worker, always.
    static let sequentialShardCommands: PGQuery = "SET LOCAL citus.multi_shard_modify_mode TO 'sequential'"

    static let monthlyPartitions: PGQuery = """
        SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'usage_events'::regclass AND c.relname ~ '^usage_events_[0-9]{4}_[0-9]{2}$' ORDER BY c.relname
        """

    /// Purges the locked `users`' tombstones: habits after their reminders and progress.
    private func purgeTombstones(_ connection: PGConnection, tenant: UUID, cutoff: Date, users: [String], report: inout Report) async throws {
        for (tables, children) in [(Array(Self.purgeTables.dropLast()), false), (["habits"] as [PGFragment], true)] {
            report.tombstonesPurged += try await connection.query(Self.purgeTombstones(tables: tables, tenant: tenant, cutoff: cutoff, users: users, childrenOfHabits: children))
                .single().decode("purged", as: Int.self)
        }
    }

    public func run(retention: Retention, now: Date = Date()) async throws -> Report {
        var report = Report()
        let tenants = try await pool.withConnection { try await $0.query(Self.tenantIDs).rows.map { try $0.decode("id", as: UUID.self) } }
        report.tenants = tenants.count
        // Citus refuses a row lock over several shards: there each user is purged in a
        // transaction of its own, on its shard.
        let distributed = try await DistributionStore(pool: pool).isCitus()
        for tenant in tenants {
            if distributed {
                let cutoff = now.addingTimeInterval(-retention.tombstones)
                let users = try await pool.withTransaction(readOnly: true) { connection in
                    try await RequestScope.set(on: connection, tenantID: tenant, userID: nil)
                    return try await connection.query(Self.usersWithTombstones(tenant: tenant, cutoff: cutoff)).rows.map { try $0.decode("user_id", as: String.self) }
                }
                for user in users {
                    try await pool.withTransaction { connection in
                        try await RequestScope.set(on: connection, tenantID: tenant, userID: nil)
                        guard try await !connection.query(Self.lockUser(tenant: tenant, user: user)).rows.isEmpty else {
                            report.usersSkippedBusy += 1
                            return
                        }
                        try await purgeTombstones(connection, tenant: tenant, cutoff: cutoff, users: [user], report: &report)
                    }
                }
            }
            try await pool.withTransaction { connection in
                try await RequestScope.set(on: connection, tenantID: tenant, userID: nil)
                if !distributed {
                    let cutoff = now.addingTimeInterval(-retention.tombstones)
                    let users = try await connection.query(Self.lockUsersWithTombstones(tenant: tenant, cutoff: cutoff)).rows.map { try $0.decode("user_id", as: String.self) }
                    let candidates = try await connection.query(Self.countUsersWithTombstones(tenant: tenant, cutoff: cutoff)).single().decode("n", as: Int.self)
                    report.usersSkippedBusy += max(0, candidates - users.count)
                    if !users.isEmpty { try await purgeTombstones(connection, tenant: tenant, cutoff: cutoff, users: users, report: &report) }
                }
                report.pushBatchesPurged += try await connection.query(Self.purgeBatches(tenant: tenant, cutoff: now.addingTimeInterval(-retention.pushBatches))).affectedRows ?? 0
                report.conflictsPurged += try await connection.query(Self.purgeConflicts(tenant: tenant, cutoff: now.addingTimeInterval(-retention.conflicts))).affectedRows ?? 0
            }
        }
        // Its own short transaction: the move lifts the forced policies of the DEFAULT
        // partition (an exclusive lock on it) and must not hold that lock while months are
        // archived below.
        report.defaultPartitionRowsMoved = try await pool.withTransaction { connection in
            if distributed { try await connection.query(Self.sequentialShardCommands) }
            return try await connection.query(Self.moveDefaultPartitionRows).single().decode("moved", as: Int.self)
        }
        try await pool.withTransaction { connection in
            if distributed { try await connection.query(Self.sequentialShardCommands) }
            report.partitionsCreated = try await connection.query(Self.ensurePartitions(now: now)).single().decode("created", as: Int.self)
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone.gmt
            let cutoff = now.addingTimeInterval(-retention.usageEvents)
            for row in try await connection.query(Self.monthlyPartitions).rows {
                let name = try row.decode("relname", as: String.self)
                let parts = name.split(separator: "_").suffix(2).compactMap { Int($0) }
                guard parts.count == 2, let start = calendar.date(from: DateComponents(year: parts[0], month: parts[1], day: 1)),
                    let end = calendar.date(byAdding: .month, value: 1, to: start), end <= cutoff
                else { continue }
                // Detaching takes a lock on `users` (the partition's foreign key) that every push
                // holds for its transaction: wait at most `archiveLockTimeout` for in-flight
                // pushes (new ones queue behind the waiting detach), else leave the month for
                // the next run.
                try await connection.query(Self.savepoint)
                do {
                    // Names come from the catalog and match ^usage_events_[0-9]{4}_[0-9]{2}$.
                    // One command per round trip: Citus passes a DDL string on to the
                    // workers whole, and they take one command per statement.
                    try await connection.simpleQuery(unsafeSQL: "SET LOCAL lock_timeout = '\(Int(Self.archiveLockTimeout / .milliseconds(1)))ms'")
                    try await connection.simpleQuery(unsafeSQL: "ALTER TABLE usage_events DETACH PARTITION \(PGQuery.quoteIdentifier(name))")
                    try await connection.simpleQuery(unsafeSQL: "ALTER TABLE \(PGQuery.quoteIdentifier(name)) SET SCHEMA archive")
                    try await connection.query(Self.releaseSavepoint)
                    report.partitionsArchived.append(name)
                } catch let error as PGError where error.sqlState == .lockNotAvailable {
                    try await connection.query(Self.rollbackToSavepoint)
                    report.partitionsDeferred.append(name)
                }
            }
        }
        return report
    }
}
