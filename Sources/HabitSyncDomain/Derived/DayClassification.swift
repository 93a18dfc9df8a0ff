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
/// classified, not only days that have records). Built once per recompute; day numbers and
/// per-habit lookups are precomputed, since a recompute walks every day of the history.
public struct DayClassifier: Sendable {
    struct Entry: Sendable {
        let habit: HabitDefinition
        let start: Int
        let end: Int
        let records: [Int: DayRecord]
        /// The same records in day order: a walk through the days reads them in turn instead
        /// of hashing every day (the lookups were the recompute's largest cost in a profile).
        let days: [Int]
        let ordered: [DayRecord]
    }

    let entries: [Entry]

    public init(habits: [HabitDefinition], records: [DayRecord]) {
        var byHabit: [UUID: [Int: DayRecord]] = [:]
        for record in records where !record.deleted { byHabit[record.habitID, default: [:]][record.date.dayNumber] = record }
        self.entries = habits.filter { !$0.deleted }.map { habit in
            let records = byHabit[habit.id] ?? [:]
            let sorted = records.sorted { $0.key < $1.key }
            return Entry(habit: habit, start: habit.startDate.dayNumber, end: habit.endDate?.dayNumber ?? Int.max, records: records,
                         days: sorted.map(\.key), ordered: sorted.map(\.value))
        }
    }

    /// The first day any habit applies, or nil without habits.
    public var firstDay: LocalDate? { entries.map(\.start).min().map(LocalDate.init(dayNumber:)) }

    public func classify(_ date: LocalDate) -> DayClassification { classify(dayNumber: date.dayNumber) }

    public func classify(dayNumber day: Int) -> DayClassification {
        classify(day) { entry, _ in entry.records[day] }
    }

    /// The rules for one day; `record` finds an entry's record for that day.
    private func classify(_ day: Int, record: (Entry, Int) -> DayRecord?) -> DayClassification {
        var dueCount = 0
        var allDueComplete = true
        var frequencyComplete = false
        for (index, entry) in entries.enumerated() where entry.start <= day && day <= entry.end {
            let record = record(entry, index)
            if record?.skipped == true { continue }  // a skip is neutral
            let complete = record?.isComplete(habitType: entry.habit.habitType) ?? false
            if entry.habit.hasFixedSchedule {
                guard entry.habit.isDue(dayNumber: day, startDayNumber: entry.start) else { continue }
                dueCount += 1
                if !complete { allDueComplete = false }
            } else if complete {
                frequencyComplete = true
            }
        }
        if dueCount > 0 { return allDueComplete ? .complete : .incomplete }
        return frequencyComplete ? .complete : .rest
    }

    /// How far back derived state looks: ten years. A start date in year 1 must not make every
    /// push walk 740,000 days; the analytics views use the same window.
    public static let historyDays = 3660

    /// Every day from the first habit's start (at most `historyDays` back) through `today`,
    /// classified once, walking each habit's records in day order alongside.
    public func classifyAll(through today: LocalDate) -> [(dayNumber: Int, classification: DayClassification)] {
        guard let earliest = entries.map(\.start).min(), earliest <= today.dayNumber else { return [] }
        let first = max(earliest, today.dayNumber - Self.historyDays)
        var cursors = [Int](repeating: 0, count: entries.count)
        var classified: [(dayNumber: Int, classification: DayClassification)] = []
        classified.reserveCapacity(today.dayNumber - first + 1)
        for day in first...today.dayNumber {
            classified.append((day, classify(day) { entry, index in
                var cursor = cursors[index]
                while cursor < entry.days.count && entry.days[cursor] < day { cursor += 1 }
                cursors[index] = cursor
                return cursor < entry.days.count && entry.days[cursor] == day ? entry.ordered[cursor] : nil
            }))
        }
        return classified
    }
}
