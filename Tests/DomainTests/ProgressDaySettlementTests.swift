import Foundation
import HabitSyncDomain
import Testing

/// What `ProgressDaySettlement` decides for a batch beyond one day's fold (which
/// `ProgressDayMergeTests` covers): which day each change names, the versions, the additions
/// kept and forgotten, and when the derived records must be recomputed.
@Suite struct ProgressDaySettlementTests {
    static let habit = UUID(uuidString: "6a3a2c9e-0000-4000-8000-000000000001")!
    static let otherHabit = UUID(uuidString: "6a3a2c9e-0000-4000-8000-000000000002")!
    static let batch = UUID(uuidString: "b0000000-0000-4000-8000-000000000001")!
    static let base = Date(timeIntervalSince1970: 1_795_162_530)
    static let date = LocalDate(year: 2026, month: 11, day: 24) ?? LocalDate(dayNumber: 0)

    static func id(_ n: Int) -> UUID { UUID(uuidString: String(format: "d0000000-0000-4000-8000-%012d", n)) ?? UUID() }

    static func record(habit: UUID = habit, count: Int, goal: Int = 2) -> DailyProgressRecord {
        DailyProgressRecord(
            habitId: habit, date: date, progressCount: count, goalCount: goal, timestamps: [], difficulty: nil, skipReason: nil, skipNote: nil)
    }

    static func change(_ index: Int, id: UUID, at seconds: Double, _ record: DailyProgressRecord?, increment: Int? = nil) -> PushChange {
        PushChange(
            index: index, collection: .dailyProgress, op: record == nil ? .delete : .upsert, id: id,
            updatedAt: base.addingTimeInterval(seconds), clamped: false, record: record.map(ValidatedRecord.dailyProgress), rawRecord: nil,
            increment: increment)
    }

    /// A stored live day with `count` set by the phone at `base`, version 7.
    static func storedDay(
        id: UUID, count: Int, goal: Int = 2, additions: [(String, ProgressCounter.Addition)] = []
    ) -> ProgressDaySettlement.StoredDay {
        let key = LWWKey(updatedAt: base, deviceID: "phone")
        return .init(
            id: id, serverVersion: 7, fields: ProgressDayFields(record: record(count: count, goal: goal)),
            merge: .init(
                record: record(count: count, goal: goal), timestamps: [], key: key, deleted: false,
                countSetting: .init(value: count, at: key)),
            additions: additions)
    }

    @Test func aChangeNamesTheStoredDayOfItsHabitAndDateWhateverItsID() {
        let stored = Self.storedDay(id: Self.id(1), count: 1)
        let settlement = ProgressDaySettlement(
            changes: [Self.change(0, id: Self.id(2), at: 60, Self.record(count: 2), increment: 1)], stored: [stored], device: "watch",
            batch: Self.batch, firstVersion: 8)
        #expect(settlement.writes.map(\.id) == [Self.id(1)])
        #expect(settlement.writes.first?.isStored == true)
        #expect(settlement.outcomes == [.init(index: 0, day: Self.id(1), outcome: .applied, version: 8)])
        #expect(settlement.writes.first?.count == 2, "the stored set of 1 plus the addition")
    }

    @Test func twoIDsForOneNewDayInOneBatchTakeTheFirst() {
        let settlement = ProgressDaySettlement(
            changes: [
                Self.change(0, id: Self.id(3), at: 10, Self.record(count: 1), increment: 1),
                Self.change(1, id: Self.id(4), at: 20, Self.record(count: 2), increment: 1),
                Self.change(2, id: Self.id(5), at: 30, Self.record(habit: Self.otherHabit, count: 1), increment: 1),
            ], stored: [], device: "phone", batch: Self.batch, firstVersion: 1)
        #expect(settlement.writes.map(\.id) == [Self.id(3), Self.id(5)])
        #expect(settlement.writes.map(\.isStored) == [false, false])
        #expect(settlement.writes.map(\.version) == [1, 2], "a version per day written, in the batch's order")
        #expect(settlement.nextVersion == 3)
        #expect(settlement.outcomes.map(\.day) == [Self.id(3), Self.id(3), Self.id(5)])
        #expect(settlement.writes.first?.count == 2)
        #expect(settlement.added.map(\.changeIndex) == [0, 1, 2], "additions with no set before them are all kept")
        #expect(settlement.movesDerivedState, "a new day")
    }

    @Test func theSameSetAgainWritesNothingAndTakesNoVersion() {
        let stored = Self.storedDay(id: Self.id(1), count: 1)
        let settlement = ProgressDaySettlement(
            changes: [Self.change(0, id: Self.id(1), at: 0, Self.record(count: 1))], stored: [stored], device: "phone", batch: Self.batch,
            firstVersion: 8)
        #expect(settlement.writes.isEmpty)
        #expect(settlement.nextVersion == 8)
        #expect(settlement.outcomes == [.init(index: 0, day: Self.id(1), outcome: .unchanged, version: 7)])
        #expect(!settlement.movesDerivedState)
    }

    @Test func aCompletionOfACompleteDayCannotMoveTheDerivedRecords() {
        // Past the goal before and after: complete for a formation habit, over the ceiling
        // for a breaking one.
        let stored = Self.storedDay(id: Self.id(1), count: 3, goal: 2)
        let again = ProgressDaySettlement(
            changes: [Self.change(0, id: Self.id(1), at: 60, Self.record(count: 4), increment: 1)], stored: [stored], device: "phone",
            batch: Self.batch, firstVersion: 8)
        #expect(again.writes.first?.count == 4)
        #expect(!again.movesDerivedState, "complete before and after")
        let meeting = ProgressDaySettlement(
            changes: [Self.change(0, id: Self.id(1), at: 60, Self.record(count: 3), increment: 1)],
            stored: [Self.storedDay(id: Self.id(1), count: 2, goal: 2)], device: "phone", batch: Self.batch, firstVersion: 8)
        #expect(meeting.movesDerivedState, "a breaking habit's day goes over its ceiling")
        let reaching = ProgressDaySettlement(
            changes: [Self.change(0, id: Self.id(1), at: 60, Self.record(count: 2), increment: 1)],
            stored: [Self.storedDay(id: Self.id(1), count: 1, goal: 2)], device: "phone", batch: Self.batch, firstVersion: 8)
        #expect(reaching.movesDerivedState, "the day reaches its goal")
    }

    @Test func aNewSetForgetsTheStoredAdditionsItCoversAndKeepsTheCountOfTheRest() {
        let early = ProgressCounter.Addition(delta: 1, at: LWWKey(updatedAt: Self.base.addingTimeInterval(10), deviceID: "watch"))
        let late = ProgressCounter.Addition(delta: 1, at: LWWKey(updatedAt: Self.base.addingTimeInterval(50), deviceID: "watch"))
        let stored = Self.storedDay(id: Self.id(1), count: 0, additions: [("watch|a|0", early), ("watch|b|0", late)])
        // The phone set 4 at +30, having seen the early addition and not the late one.
        let settlement = ProgressDaySettlement(
            changes: [Self.change(0, id: Self.id(1), at: 30, Self.record(count: 4))], stored: [stored], device: "phone", batch: Self.batch,
            firstVersion: 8)
        #expect(settlement.writes.first?.count == 5)
        #expect(settlement.covered == [.init(day: Self.id(1), through: LWWKey(updatedAt: Self.base.addingTimeInterval(30), deviceID: "phone"))])
        #expect(settlement.added.isEmpty)
    }

    @Test func anAdditionIsKeptUnderItsDeviceBatchAndIndex() {
        #expect(ProgressDaySettlement.additionID(device: "phone", batch: Self.batch, index: 3) == "phone|b0000000-0000-4000-8000-000000000001|3")
    }

    // MARK: - What the triggers would have kept (migration 0049)

    @Test func theDigestChangeTakesTheStoredTermOutAndPutsTheNewOneIn() {
        let stored = Self.storedDay(id: Self.id(1), count: 1)
        let update = ProgressDaySettlement(
            changes: [Self.change(0, id: Self.id(1), at: 60, Self.record(count: 2), increment: 1)], stored: [stored], device: "phone",
            batch: Self.batch, firstVersion: 8)
        var expected = RecordDigest()
        expected.remove(id: Self.id(1), serverVersion: 7)
        expected.add(id: Self.id(1), serverVersion: 8)
        #expect(update.digestChange == expected)
        #expect(update.digestChange.count == 0, "the day was and is live")

        let new = ProgressDaySettlement(
            changes: [Self.change(0, id: Self.id(2), at: 60, Self.record(count: 1), increment: 1)], stored: [], device: "phone", batch: Self.batch,
            firstVersion: 8)
        #expect(new.digestChange == RecordDigest(count: 1, hash: RecordDigest.term(id: Self.id(2), serverVersion: 8)))

        let delete = ProgressDaySettlement(
            changes: [Self.change(0, id: Self.id(1), at: 60, nil)], stored: [stored], device: "phone", batch: Self.batch, firstVersion: 8)
        let deleted = RecordDigest(count: -1, hash: RecordDigest.term(id: Self.id(1), serverVersion: 7))
        #expect(delete.digestChange == deleted, "a tombstone counts for nothing")

        let unchanged = ProgressDaySettlement(
            changes: [Self.change(0, id: Self.id(1), at: 0, Self.record(count: 1))], stored: [stored], device: "phone", batch: Self.batch,
            firstVersion: 8)
        #expect(unchanged.digestChange.isEmpty, "nothing written")
    }

    @Test func aRevivedTombstoneAddsItsTermOnly() {
        let key = LWWKey(updatedAt: Self.base, deviceID: "phone")
        let tombstone = ProgressDaySettlement.StoredDay(
            id: Self.id(1), serverVersion: 7, fields: ProgressDayFields(record: Self.record(count: 1)),
            merge: .init(record: nil, timestamps: [], key: key, deleted: true, countSetting: .init(value: 0, at: key)), additions: [])
        let revival = ProgressDaySettlement(
            changes: [Self.change(0, id: Self.id(1), at: 60, Self.record(count: 1))], stored: [tombstone], device: "phone", batch: Self.batch,
            firstVersion: 8)
        #expect(revival.digestChange == RecordDigest(count: 1, hash: RecordDigest.term(id: Self.id(1), serverVersion: 8)))
        #expect(revival.streakMonths == [LocalDate(year: 2026, month: 11, day: 1)], "a day that was not there now is")
    }

    @Test func streakMonthsAreThoseWhoseDaysTheClassifierReadsDifferently() {
        let stored = Self.storedDay(id: Self.id(1), count: 1, goal: 3)
        let closer = ProgressDaySettlement(
            changes: [Self.change(0, id: Self.id(1), at: 60, Self.record(count: 2, goal: 3), increment: 1)], stored: [stored], device: "phone",
            batch: Self.batch, firstVersion: 8)
        #expect(closer.writes.count == 1)
        #expect(closer.streakMonths.isEmpty, "2 of 3 is as incomplete as 1 of 3: no summary can move")
        #expect(!closer.movesDerivedState)

        let complete = ProgressDaySettlement(
            changes: [Self.change(0, id: Self.id(1), at: 60, Self.record(count: 3, goal: 3))], stored: [stored], device: "phone", batch: Self.batch,
            firstVersion: 8)
        #expect(complete.streakMonths == [LocalDate(year: 2026, month: 11, day: 1)])

        // A day moved to another month: both months.
        let moved = DailyProgressRecord(
            habitId: Self.habit, date: LocalDate(year: 2026, month: 12, day: 2) ?? Self.date, progressCount: 1, goalCount: 3, timestamps: [],
            difficulty: nil, skipReason: nil, skipNote: nil)
        let move = ProgressDaySettlement(
            changes: [Self.change(0, id: Self.id(1), at: 60, moved)], stored: [stored], device: "phone", batch: Self.batch, firstVersion: 8)
        #expect(move.streakMonths == [LocalDate(year: 2026, month: 11, day: 1), LocalDate(year: 2026, month: 12, day: 1)])
    }
}
