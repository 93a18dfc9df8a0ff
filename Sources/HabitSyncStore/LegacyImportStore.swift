import Crypto
import Foundation
import HabitSyncDomain
import LibPQClient

/// Writes a legacy import plan for one user, all or nothing, as a data migration.
///
/// Imported records carry the oldest possible LWW key (2001-01-01, `legacy-import`), so any
/// write a device ever made wins over them, and importing again changes nothing.
public struct LegacyImportStore: Sendable {
    public struct Report: Sendable, Equatable {
        public var habits = 0
        public var reminders = 0
        public var days = 0
        public var written = 0
        public var alreadyImported = false
        public var dryRun = false
        public var warnings: [String] = []
        public var statusMismatches: [String] = []
    }

    public let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    static let legacyUpdatedAt = Date(timeIntervalSinceReferenceDate: 0)
    static let legacyUpdatedBy = "legacy-import"

    public static func sha256(_ data: Data) -> String { SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined() }

    static func migration(tenant: UUID, user: String, name: String) -> PGQuery {
        "SELECT status FROM data_migrations WHERE tenant_id = \(tenant) AND user_id = \(user) AND name = \(name)"
    }

    static func existingProgress(tenant: UUID, user: String, habits: [UUID]) -> PGQuery {
        """
        SELECT habit_id::text || '|' || date::text AS key FROM daily_progress
        WHERE tenant_id = \(tenant) AND user_id = \(user) AND habit_id = ANY(\(habits)::uuid[])
        """
    }

    static func archive(tenant: UUID, user: String, sourceSHA256: String, positions: [Int32], habits: [UUID], sources: [String]) -> PGQuery {
        """
        INSERT INTO legacy_import_archive (tenant_id, user_id, source_sha256, position, habit_id, source)
        SELECT \(tenant), \(user), \(sourceSHA256), a.position, a.habit_id, a.source::jsonb
        FROM unnest(\(positions)::int4[], \(habits)::uuid[], \(sources)::text[]) AS a(position, habit_id, source)
        ON CONFLICT DO NOTHING
        """
    }

    static func recordMigration(tenant: UUID, user: String, name: String, details: String) -> PGQuery {
        """
        INSERT INTO data_migrations (tenant_id, user_id, name, version, status, completed_at, details)
        VALUES (\(tenant), \(user), \(name), 1, 'completed', now(), \(PGJSON(details)))
        """
    }

    public func run(_ plan: LegacyImportPlan, tenant: UUID, user: String, sourceSHA256: String, dryRun: Bool, now: Date = Date()) async throws -> Report {
        var report = Report()
        report.habits = plan.habits.count
        report.reminders = plan.habits.reduce(0) { $0 + $1.reminders.count }
        report.days = plan.dayCount
        report.warnings = plan.warnings
        report.statusMismatches = plan.statusMismatches
        report.dryRun = dryRun
        let name = "legacy_import:\(sourceSHA256)"
        if dryRun {
            report.alreadyImported = try await pool.withTransaction(readOnly: true) { connection in
                try await RequestScope.set(on: connection, tenantID: tenant, userID: user)
                return try await connection.query(Self.migration(tenant: tenant, user: user, name: name)).rows.first != nil
            }
            return report
        }
        return try await pool.withTransaction { connection in
            try await RequestScope.set(on: connection, tenantID: tenant, userID: user)
            let userRow = try await PushStore.lockLiveUser(connection, tenant: tenant, user: user).user
            let counter = try userRow.decode("change_counter", as: Int64.self)
            if try await connection.query(Self.migration(tenant: tenant, user: user, name: name)).rows.first != nil {
                var repeated = report
                repeated.alreadyImported = true
                return repeated
            }
            var next = counter + 1
            func rows(_ items: [(UUID, [String?])]) -> [SyncRow] {
                items.map { item in
                    defer { next += 1 }
                    return SyncRow(id: item.0, version: next, updatedAt: Self.legacyUpdatedAt, updatedBy: Self.legacyUpdatedBy, isDelete: false, values: item.1)
                }
            }
            var written = 0
            let habitRows = rows(plan.habits.map { ($0.id, SyncTable.habits.values(.habit($0.record))) })
            if !habitRows.isEmpty {
                written += try await connection.pipeline(SyncTableSQL.lastWriterWins(.habits, tenant: tenant, user: user, rows: habitRows)).reduce(0) { $0 + $1.rows.count }
            }
            let reminderRows = rows(plan.habits.flatMap { habit in habit.reminders.map { ($0.id, SyncTable.reminders.values(.reminder($0.record))) } })
            if !reminderRows.isEmpty {
                written += try await connection.pipeline(SyncTableSQL.lastWriterWins(.reminders, tenant: tenant, user: user, rows: reminderRows)).reduce(0) { $0 + $1.rows.count }
            }
            // Progress is one record per (habit, day): days a device already recorded stay as they are.
            let existing = Set(
                try await connection.query(Self.existingProgress(tenant: tenant, user: user, habits: plan.habits.map(\.id)))
                    .rows.map { try $0.decode("key", as: String.self) })
            let newDays = plan.habits.flatMap(\.days).filter { !existing.contains("\($0.habitId.uuidString.lowercased())|\($0.date)") }
            let dayRows = rows(newDays.map { (UUID(), SyncTable.dailyProgress.values(.dailyProgress($0))) })
            if !dayRows.isEmpty {
                written += try await connection.pipeline(SyncTableSQL.lastWriterWins(.dailyProgress, tenant: tenant, user: user, rows: dayRows)).reduce(0) { $0 + $1.rows.count }
            }
            try await connection.query(
                Self.archive(
                    tenant: tenant, user: user, sourceSHA256: sourceSHA256, positions: plan.habits.map { Int32($0.position) },
                    habits: plan.habits.map(\.id), sources: plan.habits.map(\.source.jsonText)))
            report.written = written
            let details =
                "{\"habits\":\(report.habits),\"reminders\":\(report.reminders),\"days\":\(report.days),\"written\":\(written),\"timeZone\":\(JSONText.string(plan.timeZone)),\"dateEncoding\":\(JSONText.string(plan.dateEncoding)),\"warnings\":[\(plan.warnings.map(JSONText.string).joined(separator: ","))],\"statusMismatches\":[\(plan.statusMismatches.map(JSONText.string).joined(separator: ","))]}"
            try await connection.query(Self.recordMigration(tenant: tenant, user: user, name: name, details: details))
            // The user's calendar is the file's; derived state is recomputed from the imported history.
            try await connection.query(
                "UPDATE users SET time_zone = \(plan.timeZone) WHERE tenant_id = \(tenant) AND user_id = \(user) AND NOT EXISTS (SELECT 1 FROM user_settings s WHERE s.tenant_id = \(tenant) AND s.user_id = \(user))"
            )
            let writer = DerivedStateWriter(connection: connection, tenant: tenant, user: user, derivedRecordID: try userRow.decode("derived_record_id", as: UUID.self), now: now)
            next = try await writer.recompute(nextVersion: next)
            if next - 1 > counter {
                let notice = ChangeNotice(
                    tenantID: tenant, userID: user, serverVersion: next - 1, deviceID: ServerDevice.name,
                    collections: [.dailyProgress, .habits, .reminders, .globalStreak, .userProgress, .usageStreak])
                try await PushStore.moveCounter(connection, tenant: tenant, user: user, to: next - 1, notice: notice)
            }
            return report
        }
    }
}
