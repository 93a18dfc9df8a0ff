import Foundation
import HabitSyncDomain
import LibPQClient
import SyncTestSupport
import TestSupport
import Testing

@testable import HabitSyncStore

/// A habit's delete tombstones its reminders with the delete's key (`updatedBy: "server"`); a
/// reminder merges field by field, so each field keeps the key it had, and an edit of the
/// reminder older than the habit's delete merges into the tombstone whether it arrives before
/// the delete or after it (issue 44: it used to be rejected after it, naming a deleted habit,
/// and to win before it).
@Suite struct ReminderCascadeTests {
    @Test func theCascadeNamesEveryFieldOfAReminder() throws {
        let record = try ValidatedRecord.validate(
            .reminders, ["habitId": .string(UUID().uuidString), "time": .string("07:30")], context: .standalone(now: Wire.base))
        #expect(Set(CanonicalFields.of(record)?.keys.map { $0 } ?? []) == Set(PushBatch.reminderFields))
    }

    @Test func aReminderEditOlderThanItsHabitsDeleteMergesIntoTheTombstoneInEitherOrder() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            var rows: [String] = []
            for (user, editFirst) in [("edit-first", true), ("delete-first", false)] {
                let phone = try await world.client(server, user: user, device: "phone")
                let watch = phone.withDevice("watch")
                let habit = UUID(), reminder = UUID()
                _ = try await phone.push([
                    Wire.change("habits", habit, at: Wire.at(-3600), record: Wire.habit()),
                    Wire.change("reminders", reminder, at: Wire.at(-3600), record: Wire.reminder(habit: habit)),
                ])
                let edit = try FieldMergeSyncTests.body([FieldMergeSyncTests.edit("reminders", reminder, at: -1800, ["time": "21:15"])])
                let delete = try FieldMergeSyncTests.body([Wire.change("habits", habit, at: Wire.at(0), record: nil)])
                if editFirst {
                    #expect(try await watch.pushRaw(edit).status(0) == "applied")
                    #expect(try await phone.pushRaw(delete).status(0) == "applied")
                } else {
                    #expect(try await phone.pushRaw(delete).status(0) == "applied")
                    let late = try await watch.pushRaw(edit)
                    #expect(late.status(0) == "superseded", "older than the tombstone: superseded, not rejected: \(late.results)")
                }
                rows.append(
                    try await world.database.withPool(size: 1) { pool in
                        try await pool.withConnection { connection in
                            try await connection.query(
                                """
                                SELECT concat_ws(' ', deleted_at IS NOT NULL, updated_at, updated_by, time_of_day, is_active, field_times::text) AS row
                                FROM reminders WHERE user_id = \(user)
                                """
                            ).single().decode("row", as: String.self)
                        }
                    })
            }
            #expect(rows[0] == rows[1], "\(rows)")
            #expect(rows[0].contains("21:15"), "\(rows[0])")
        }
    }
}
