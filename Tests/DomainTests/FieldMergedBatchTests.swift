import Foundation
import HabitSyncDomain
import Testing

/// What `FieldMergedBatch` decides for a batch beyond one record's fold (which
/// `FieldMergedRecordTests` covers): which record each change is to, the id a new record is kept
/// under, the versions, what is written, and a reminder's live habit.
@Suite struct FieldMergedBatchTests {
    static let base = Date(timeIntervalSince1970: 1_795_162_530)
    static let context = ValidationContext.standalone(now: base.addingTimeInterval(3600))
    static let settingsID = id(99)
    static let liveHabit = id(50), deadHabit = id(51)

    static func id(_ n: Int) -> UUID { UUID(uuidString: String(format: "e0000000-0000-4000-8000-%012d", n)) ?? UUID() }

    static func change(_ index: Int, _ collection: SyncCollection, id: UUID, at seconds: Double, _ fields: [String: JSONValue]?) -> PushChange {
        let record = fields.flatMap { try? ValidatedRecord.validate(collection, $0, context: context) }
        return PushChange(
            index: index, collection: collection, op: fields == nil ? .delete : .upsert, id: id, updatedAt: base.addingTimeInterval(seconds),
            clamped: false, record: record, rawRecord: fields)
    }

    static func achievement(_ achievementID: String, unlockedAt seconds: Double) -> [String: JSONValue] {
        ["achievementId": .string(achievementID), "title": "Seven days", "unlockedAt": .string(WireTime.format(base.addingTimeInterval(seconds)))]
    }

    static func reminder(habit: UUID, time: String = "08:00") -> [String: JSONValue] {
        ["habitId": .string(habit.uuidString), "time": .string(time)]
    }

    static func settle(
        _ collection: SyncCollection, _ changes: [PushChange], by target: FieldMergedBatch.Target = .id,
        stored: [FieldMergedBatch.RecordKey: FieldMergedBatch.StoredRecord] = [:]
    ) -> FieldMergedBatch {
        FieldMergedBatch(
            collection, changes: changes, by: target, stored: stored, device: "phone", userRecordID: settingsID, liveHabits: [liveHabit],
            context: context, firstVersion: 10)
    }

    @Test func achievementsAreOnePerIDAsBytesAndKeepTheFirstIDSent() {
        let changes = [
            Self.change(0, .achievements, id: Self.id(1), at: 0, Self.achievement("caf\u{E9}", unlockedAt: -60)),
            Self.change(1, .achievements, id: Self.id(2), at: 1, Self.achievement("caf\u{E9}", unlockedAt: -120)),
            Self.change(2, .achievements, id: Self.id(3), at: 2, Self.achievement("cafe\u{301}", unlockedAt: -60)),
        ]
        let batch = Self.settle(.achievements, changes, by: .achievementID)
        #expect(FieldMergedBatch.targets(of: changes, by: .achievementID).count == 2, "two ids that differ only in normalisation are two records")
        #expect(batch.writes.map(\.id) == [Self.id(1), Self.id(3)])
        #expect(batch.writes.map(\.version) == [10, 11], "a version per record written, in the batch's order")
        #expect(batch.nextVersion == 12)
        // The earliest unlock stays, whoever wrote last.
        if case .achievement(let stored)? = batch.writes.first?.validated {
            #expect(stored.unlockedAt == Self.base.addingTimeInterval(-120))
        } else {
            Issue.record("the achievement is written with its validated record")
        }
    }

    @Test func settingsAreTheUsersOneRecordUnderItsGivenID() {
        let changes = [Self.change(0, .userSettings, id: Self.id(7), at: 0, ["timezone": "Europe/Berlin"])]
        let batch = Self.settle(.userSettings, changes, by: .user)
        #expect(batch.recordIDs[.user] == Self.settingsID)
        #expect(batch.writes.map(\.id) == [Self.settingsID])
    }

    @Test func aStoredRecordKeepsItsIDAndTheSameWriteAgainIsUnchangedWithoutAVersion() throws {
        let first = Self.settle(.reminders, [Self.change(0, .reminders, id: Self.id(1), at: 0, Self.reminder(habit: Self.liveHabit))])
        let written = try #require(first.writes.first)
        let stored = [
            FieldMergedBatch.RecordKey.id(Self.id(1)): FieldMergedBatch.StoredRecord(id: Self.id(1), serverVersion: 10, record: written.record)
        ]
        let again = Self.settle(.reminders, [Self.change(0, .reminders, id: Self.id(1), at: 0, Self.reminder(habit: Self.liveHabit))], stored: stored)
        #expect(again.writes.isEmpty && again.nextVersion == 10)
        #expect(again.settlements[FieldMergedBatch.RecordKey.id(Self.id(1))]?.outcomes[0] == .unchanged)
        #expect(again.recordIDs[FieldMergedBatch.RecordKey.id(Self.id(1))] == Self.id(1))
    }

    @Test func aLiveReminderMustNameALiveHabitAndADeleteNeedNot() {
        let batch = Self.settle(
            .reminders,
            [
                Self.change(0, .reminders, id: Self.id(1), at: 0, Self.reminder(habit: Self.deadHabit)),
                Self.change(1, .reminders, id: Self.id(2), at: 0, Self.reminder(habit: Self.liveHabit)),
                Self.change(2, .reminders, id: Self.id(3), at: 0, nil),
            ])
        guard case .rejected(let rejection)? = batch.settlements[FieldMergedBatch.RecordKey.id(Self.id(1))]?.outcomes[0] else {
            Issue.record("a reminder of a deleted habit is refused")
            return
        }
        #expect(rejection.code == .unknownReference && rejection.field == "habitId")
        #expect(batch.writes.map(\.id) == [Self.id(2), Self.id(3)])
        #expect(batch.writes.last?.validated == nil, "a tombstone of a record never seen holds no field")
        #expect(batch.writes.last?.record.deleted == true)
    }
}
