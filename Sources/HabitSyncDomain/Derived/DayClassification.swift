import Foundation

/// What a calendar day was for the user's habits.
public enum DayClassification: Sendable, Equatable {
    /// Every due fixed-schedule habit complete (at least one due), or none due and a frequency habit complete.
    case complete
    /// A due habit not complete.
    case incomplete
    /// Nothing due and nothing completed: neither extends nor breaks a streak.
    case rest
}

/// Classifies days from a user's habits and progress (seed erratum 3: every day is
/// classified, not only days that have records).
public struct DayClassifier: Sendable {
    let habits: [HabitDefinition]
    let records: [UUID: [Int: DayRecord]]

    public init(habits: [HabitDefinition], records: [DayRecord]) {
        self.habits = habits.filter { !$0.deleted }
        var byHabit: [UUID: [Int: DayRecord]] = [:]
        for record in records where !record.deleted { byHabit[record.habitID, default: [:]][record.date.dayNumber] = record }
        self.records = byHabit
    }

    /// The first day any habit applies, or nil without habits.
    public var firstDay: LocalDate? { habits.map(\.startDate).min() }

    public func classify(_ date: LocalDate) -> DayClassification {
        var dueCount = 0
        var allDueComplete = true
        var frequencyComplete = false
        for habit in habits where habit.isInRange(date) {
            let record = records[habit.id]?[date.dayNumber]
            if record?.skipped == true { continue }  // a skip is neutral
            let complete = record?.isComplete(habitType: habit.habitType) ?? false
            if habit.hasFixedSchedule {
                guard habit.isDue(on: date) else { continue }
                dueCount += 1
                if !complete { allDueComplete = false }
            } else if complete {
                frequencyComplete = true
            }
        }
        if dueCount > 0 { return allDueComplete ? .complete : .incomplete }
        return frequencyComplete ? .complete : .rest
    }
}
