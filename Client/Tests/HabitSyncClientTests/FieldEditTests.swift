import Foundation
import HabitSyncClient
import HabitSyncDomain
import Testing

/// The outbox records which fields of a habit, reminder, selected app or the settings the user
/// changed, each with its time, coalesces them, and sends only those (protocol 2), so another
/// device's edit of another field survives.
@Suite struct FieldEditTests {
    static let day = LocalDate(year: 2026, month: 11, day: 24)!

    static func onlyChange(_ batch: OutgoingBatch) throws -> [String: JSONValue] {
        try #require(try LocalStoreTests.changes(batch).first)
    }

    /// A habit the server has confirmed.
    static func syncedHabit(_ store: LocalStore) throws -> Stored<Habit> {
        let habit = try store.save(Habit(name: "Read", goalCount: 10, goalUnit: "pages", startDate: Self.day))
        let batch = try #require(try store.nextBatch())
        #expect(try ProgressIncrementTests.envelope(batch)["protocolVersion"] == nil, "a new record is sent whole, as protocol 1")
        #expect(try Self.onlyChange(batch)["fieldTimes"] == nil)
        _ = try store.settle(batch, responseBody: ProgressIncrementTests.applied(batch))
        return habit
    }

    @Test func onlyTheChangedFieldsAreSentEachWithItsTime() throws {
        let clock = ManualClock()
        let store = try LocalStoreTests.store(clock)
        let habit = try Self.syncedHabit(store)
        clock.now += 10
        var edited = habit.value
        edited.name = "Read books"
        try store.save(edited, id: habit.id)
        clock.now += 5
        edited.goalCount = 20
        try store.save(edited, id: habit.id)
        // Saving what is stored already is no edit.
        #expect(try store.save(edited, id: habit.id).syncStatus == .pending)
        let batch = try #require(try store.nextBatch())
        #expect(batch.changeCount == 1)
        #expect(try ProgressIncrementTests.envelope(batch)["protocolVersion"] == .number(2))
        let change = try Self.onlyChange(batch)
        #expect(change["record"] == .object(["name": .string("Read books"), "goalCount": .number(20)]))
        // The rename was earlier than the change's updatedAt (the goal's time): it says so.
        #expect(change["fieldTimes"] == .object(["name": .string(WireTime.format(Date(timeIntervalSince1970: 1_795_000_010)))]))
        #expect(change["updatedAt"] == .string(WireTime.format(Date(timeIntervalSince1970: 1_795_000_015))))
    }

    @Test func anEditWhileABatchIsOutGoesInTheNextOneAlone() throws {
        let clock = ManualClock()
        let store = try LocalStoreTests.store(clock)
        let habit = try Self.syncedHabit(store)
        var edited = habit.value
        clock.now += 1
        edited.name = "One"
        try store.save(edited, id: habit.id)
        let first = try #require(try store.nextBatch())
        clock.now += 1
        edited.icon = "📚"
        try store.save(edited, id: habit.id)
        #expect(try store.nextBatch()?.body == first.body, "the batch out is sent again byte for byte")
        _ = try store.settle(first, responseBody: ProgressIncrementTests.applied(first))
        let second = try #require(try store.nextBatch())
        #expect(try Self.onlyChange(second)["record"] == .object(["icon": .string("📚")]))
        _ = try store.settle(second, responseBody: ProgressIncrementTests.applied(second, version: 8))
        #expect(try store.nextBatch() == nil)
        #expect(try store.fetch(Habit.self, id: habit.id)?.value.name == "One")
    }

    @Test func aClearedFieldIsSentAsNullAndARecordNeverConfirmedIsSentWhole() throws {
        let clock = ManualClock()
        let store = try LocalStoreTests.store(clock)
        let habit = try Self.syncedHabit(store)
        var edited = habit.value
        edited.color = "#FF0000"
        try store.save(edited, id: habit.id)
        _ = try store.settle(try #require(try store.nextBatch()), responseBody: ProgressIncrementTests.applied(try #require(try store.nextBatch())))
        clock.now += 1
        edited.color = nil
        try store.save(edited, id: habit.id)
        let cleared = try #require(try store.nextBatch())
        #expect(try Self.onlyChange(cleared)["record"] == .object(["color": .null]))
        _ = try store.settle(cleared, responseBody: ProgressIncrementTests.applied(cleared))

        // A record created and edited before any batch took it: one whole record.
        let fresh = try store.save(Reminder(habitId: habit.id, time: "07:00"))
        var changed = fresh.value
        changed.time = "08:00"
        try store.save(changed, id: fresh.id)
        let whole = try Self.onlyChange(try #require(try store.nextBatch()))
        #expect(whole["fieldTimes"] == nil)
        guard case .object(let record)? = whole["record"] else { Issue.record("no record"); return }
        #expect(record["habitId"] == .string(habit.id.uuidString.lowercased()) || record["habitId"] == .string(habit.id.uuidString))
        #expect(record["time"] == .string("08:00"))
    }
}
