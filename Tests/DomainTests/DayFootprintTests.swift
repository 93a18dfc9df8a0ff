import Foundation
import HabitSyncDomain
import Testing

/// A write that keeps a day's footprint cannot move a derived record: over every pair of
/// records from a grid (two habits, two days, counts 0–3 against goals 1–2, skipped, deleted,
/// none), wherever `canMoveDerivedState` says no, every day classifies the same for every
/// habit type and schedule kind, beside another record of the same habit and day range. And
/// where it says yes, some habit really can tell the two apart (the rule is not too coarse).
@Suite struct DayFootprintTests {
    static let first = UUID(), second = UUID()
    static let monday = LocalDate(year: 2026, month: 11, day: 23)!

    static var records: [DayRecord?] {
        var all: [DayRecord?] = [nil]
        for habit in [first, second] {
            for date in [monday, monday.adding(days: 1)] {
                for count in 0...3 {
                    for goal in 1...2 {
                        for (skipped, deleted) in [(false, false), (true, false), (false, true)] {
                            all.append(DayRecord(habitID: habit, date: date, progressCount: count, goalCount: goal, skipped: skipped, deleted: deleted))
                        }
                    }
                }
            }
        }
        return all
    }

    static func classified(_ record: DayRecord?, habitType: String, schedule: HabitSchedule) -> [DayClassification] {
        let habits = [first, second].map { HabitDefinition(id: $0, habitType: habitType, schedule: schedule, startDate: monday.adding(days: -1), endDate: nil) }
        // The day before, complete for both: a run the changed day extends or breaks.
        let before = [first, second].map { DayRecord(habitID: $0, date: monday.adding(days: -1), progressCount: habitType == "breaking" ? 0 : 5, goalCount: 1) }
        let classifier = DayClassifier(habits: habits, records: before + (record.map { [$0] } ?? []))
        return classifier.classify(from: monday.dayNumber - 1, through: monday.dayNumber + 2).map(\.classification)
    }

    static let habitKinds: [(String, HabitSchedule)] = [
        ("formation", .daily), ("breaking", .daily), ("formation", .frequencyWeekly(1)), ("breaking", .frequencyWeekly(1)),
    ]

    @Test func aWriteThatKeepsTheFootprintClassifiesEveryDayTheSame() {
        let all = Self.records
        var kept = 0, moved = 0
        for old in all {
            for new in all {
                let distinguishable = Self.habitKinds.contains { type, schedule in
                    Self.classified(old, habitType: type, schedule: schedule) != Self.classified(new, habitType: type, schedule: schedule)
                }
                if DayFootprint.canMoveDerivedState(from: old, to: new) {
                    moved += 1
                    // Too coarse only where a habit elsewhere in the history would tell them
                    // apart: the same footprint kind on another habit or day, or a count that
                    // matters to one of the two habit types.
                    if !distinguishable {
                        #expect(DayFootprint(old) != DayFootprint(new))
                    }
                } else {
                    kept += 1
                    #expect(!distinguishable, "\(String(describing: old)) → \(String(describing: new)) kept its footprint but moved a classification")
                }
            }
        }
        #expect(kept > 1000 && moved > 1000)
    }

    @Test func theCheckInsSecondCompletionKeepsItAndTheFirstMovesIt() {
        let day = { (count: Int) in DayRecord(habitID: Self.first, date: Self.monday, progressCount: count, goalCount: 1) }
        #expect(!DayFootprint.canMoveDerivedState(from: day(2), to: day(3)), "complete stays complete")
        #expect(DayFootprint.canMoveDerivedState(from: day(1), to: day(2)), "within a breaking habit's ceiling, then over it")
        #expect(DayFootprint.canMoveDerivedState(from: day(0), to: day(1)))
        #expect(DayFootprint.canMoveDerivedState(from: nil, to: day(1)), "a new day")
        #expect(DayFootprint.canMoveDerivedState(from: day(1), to: nil))
        #expect(!DayFootprint.canMoveDerivedState(from: nil, to: DayRecord(habitID: Self.first, date: Self.monday, progressCount: 1, goalCount: 1, deleted: true)))
    }
}
