import Foundation
import HabitSyncDomain
import LibPQClient

/// Reminders and daily progress refer to habits: references to unknown or deleted habits are
/// rejected (here for progress; `applyFieldMerge` checks a reminder's merged habit), and a
/// habit's delete tombstones its dependents.
extension PushBatch {
    static func liveHabits(tenant: UUID, user: String, ids: [UUID]) -> PGQuery {
        """
        SELECT h.id FROM unnest(\(ids)::uuid[]) AS k(id)
        CROSS JOIN LATERAL (SELECT id FROM habits WHERE tenant_id = \(tenant) AND user_id = \(user) AND id = k.id AND deleted_at IS NULL OFFSET 0) h
        """
    }

    /// The fields of a reminder (its record as pulls render it), each of which keeps its own key
    /// when a habit's delete tombstones the reminder (`ReminderCascadeTests` checks the list).
    static let reminderFields = ["habitId", "time", "isActive", "notificationIdentifier"]

    /// Tombstones the live rows of `table` that belong to the deleted habits, numbering their
    /// versions from `after + 1`. Returns the versions given. A day's progress is set to 0 at
    /// the delete's time as an explicit delete sets it (`ProgressDayMerge`): if a later
    /// addition brings the day back, it counts from there. A reminder merges field by field:
    /// its fields keep the keys they had (`field_times` names them all, the record's key moving
    /// to the delete's), so an edit older than the delete merges into the tombstone alike
    /// whether it arrives before the delete or after it.
    /// `habitsync_wire_time(column)` (`2026-11-20T08:15:30.123Z`) from immutable parts only:
    /// Citus refuses a STABLE function of a column (`to_char`, `jsonb_build_array`) in a
    /// data-modifying statement ("STABLE functions used in UPDATE queries cannot be called with
    /// column references"). The column is a `timestamptz(3)`, so its milliseconds are whole.
    static func wireTimeImmutable(_ column: PGFragment) -> PGFragment {
        let utc: PGFragment = "(\(column) AT TIME ZONE 'UTC')"
        func part(_ field: PGFragment, _ width: Int) -> PGFragment { "lpad(date_part('\(field)', \(utc))::int::text, \(width), '0')" }
        let milliseconds: PGFragment = "date_part('milliseconds', \(utc))::int"
        return """
            (\(part("year", 4)) || '-' || \(part("month", 2)) || '-' || \(part("day", 2)) || 'T' || \(part("hour", 2)) || ':' || \(part("minute", 2)) \
            || ':' || lpad((\(milliseconds) / 1000)::text, 2, '0') || '.' || lpad((\(milliseconds) % 1000)::text, 3, '0') || 'Z')
            """
    }

    /// A device id's text inside a JSON string, by immutable `replace`s: a device id holds no
    /// control character (the push refuses them), so a backslash and a quote are all there is
    /// to escape.
    static func jsonStringBody(_ column: PGFragment) -> PGFragment {
        "replace(replace(\(column), '\\', '\\\\'), '\"', '\\\"')"
    }

    static func tombstoneDependents(_ table: PGFragment, tenant: UUID, user: String, habits: [UUID], deletedAt: [Date], after version: Int64) -> PGQuery {
        var moved: PGFragment = ""
        var oldColumns: PGFragment = ""
        var returned: PGFragment = ""
        if table == "daily_progress" {
            moved = "count_set_value = 0, count_set_at = nb.updated_at, count_set_by = \(ServerDevice.sql), "
            // What each day was, for the push that keeps the digest and streak months itself.
            oldColumns = ", c.server_version AS old_version, c.date AS old_date"
            returned = ", c.id, nb.old_version, nb.old_date"
        } else if table == "reminders" {
            // Built as text and cast: jsonb_build_object is STABLE (see `wireTimeImmutable`).
            let eachField = reminderFields.map { PGFragment.literal("\"\($0)\":") + " || nb.old_key" }.joined(separator: " || ',' || ")
            moved = "field_times = ('{' || \(eachField) || '}')::jsonb || coalesce(c.field_times, '{}'::jsonb), "
            oldColumns =
                ", '[\"' || \(Self.wireTimeImmutable("c.updated_at")) || '\",\"' || \(Self.jsonStringBody("c.updated_by")) || '\"]' AS old_key"
        }
        return """
            WITH doomed AS (SELECT * FROM unnest(\(habits)::uuid[], \(deletedAt)::timestamptz[]) AS d(habit_id, updated_at)),
            numbered AS (
                SELECT c.id, d.updated_at, row_number() OVER (ORDER BY c.id) AS n\(oldColumns)
                FROM \(table) c JOIN doomed d ON c.habit_id = d.habit_id
                WHERE c.tenant_id = \(tenant) AND c.user_id = \(user) AND c.deleted_at IS NULL
                  AND (c.updated_at, c.updated_by COLLATE "C") < (d.updated_at, \(ServerDevice.sql) COLLATE "C")
            )
            UPDATE \(table) c SET \(moved)deleted_at = now(), updated_at = nb.updated_at, updated_by = \(ServerDevice.sql),
                server_version = \(version) + nb.n, synced_at = now()
            FROM numbered nb
            WHERE c.tenant_id = \(tenant) AND c.user_id = \(user) AND c.id = nb.id
            RETURNING c.server_version\(returned)
            """
    }

    /// The habits the batch's progress upserts name, each once, to be read with `liveHabits`.
    static func habitsReferenced(by changes: [PushChange]) -> [UUID] {
        var seen = Set<UUID>()
        return changes.compactMap { change -> UUID? in
            guard case .dailyProgress(let p)? = change.record, seen.insert(p.habitId).inserted else { return nil }
            return p.habitId
        }
    }

    /// Keeps deletes and the progress upserts whose habit is among `live` (those that exist and
    /// are not deleted, after this batch's habits); rejects the others with `unknown_reference`.
    func keepingLiveHabits(_ changes: [PushChange], live: Set<UUID>) -> [PushChange] {
        changes.filter { change in
            guard case .dailyProgress(let p)? = change.record, !live.contains(p.habitId) else { return true }
            reject(change.index, ChangeRejection(.unknownReference, field: "habitId", "habitId \(p.habitId.uuidString.lowercased()) names no habit of this user (or a deleted one)"))
            return false
        }
    }

    /// Tombstones the reminders and progress of deleted habits, with the delete's `updatedAt`
    /// and `updatedBy: ServerDevice.name`, each with a version of its own. One statement per table.
    func cascadeHabitDeletes(_ deleted: [(UUID, Date)]) async throws {
        guard !deleted.isEmpty else { return }
        for table: PGFragment in ["reminders", "daily_progress"] {
            let query = Self.tombstoneDependents(
                table, tenant: tenant, user: user, habits: deleted.map(\.0), deletedAt: deleted.map(\.1),
                after: nextVersion - 1)
            let rows = try await connection.query(query).rows
            let versions = try rows.map { try $0.decode("server_version", as: Int64.self) }
            if let highest = versions.max() { nextVersion = highest + 1 }
            if table == "daily_progress", settlesDailyProgress {
                // Each was a live day and is now a tombstone: its term out, its month forgotten.
                var digest = RecordDigest()
                var months: Set<LocalDate> = []
                for row in rows {
                    digest.remove(id: try row.decode("id", as: UUID.self), serverVersion: try row.decode("old_version", as: Int64.self))
                    months.insert(try row.decode("old_date", as: LocalDate.self).firstOfMonth)
                }
                settled(digest: digest, streakMonths: months)
            }
        }
    }
}
