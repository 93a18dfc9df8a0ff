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
        /// The habit's records in day order (of two for one day, the later one), and their days.
        let days: [Int]
        let records: [DayRecord]
    }

    let entries: [Entry]

    public init(habits: [HabitDefinition], records: [DayRecord]) {
        var byHabit: [UUID: [Int: DayRecord]] = [:]
        for record in records where !record.deleted { byHabit[record.habitID, default: [:]][record.date.dayNumber] = record }
        self.entries = habits.filter { !$0.deleted }.map { habit in
            let sorted = (byHabit[habit.id] ?? [:]).sorted { $0.key < $1.key }
            return Entry(
                habit: habit, start: habit.startDate.dayNumber, end: habit.endDate?.dayNumber ?? Int.max,
                days: sorted.map(\.key), records: sorted.map(\.value))
        }
    }

    /// The first day any habit applies, or nil without habits.
    public var firstDay: LocalDate? { entries.map(\.start).min().map(LocalDate.init(dayNumber:)) }

    public func classify(_ date: LocalDate) -> DayClassification { classify(dayNumber: date.dayNumber) }

    public func classify(dayNumber day: Int) -> DayClassification {
        classify(from: day, through: day)[0].classification
    }

    /// How far back derived state looks: ten years. A start date in year 1 must not make every
    /// push walk 740,000 days; the analytics views use the same window.
    public static let historyDays = 3660

    /// Every day from the first habit's start (at most `historyDays` back) through `today`,
    /// classified once.
    public func classifyAll(through today: LocalDate) -> [(dayNumber: Int, classification: DayClassification)] {
        guard let earliest = entries.map(\.start).min(), earliest <= today.dayNumber else { return [] }
        return classify(from: max(earliest, today.dayNumber - Self.historyDays), through: today.dayNumber)
    }

    /// Goes habit by habit, each walking its days and its records in step, and tallies per day
    /// what the rules need; then classifies each day. (A dictionary lookup per habit and day
    /// was the recompute's largest cost in a profile of the push load.)
    public func classify(from first: Int, through last: Int) -> [(dayNumber: Int, classification: DayClassification)] {
        guard first <= last else { return [] }
        let count = last - first + 1
        var due = [Int](repeating: 0, count: count)
        var dueMissed = [Bool](repeating: false, count: count)
        var frequencyDone = [Bool](repeating: false, count: count)
        for entry in entries {
            let lower = max(first, entry.start), upper = min(last, entry.end)
            guard lower <= upper else { continue }
            var cursor = entry.days.firstIndex { $0 >= lower } ?? entry.days.count
            for day in lower...upper {
                var record: DayRecord?
                if cursor < entry.days.count && entry.days[cursor] == day {
                    record = entry.records[cursor]
                    cursor += 1
                }
                if record?.skipped == true { continue }  // a skip is neutral
                let complete = record?.isComplete(habitType: entry.habit.habitType) ?? false
                if entry.habit.hasFixedSchedule {
                    guard entry.habit.isDue(dayNumber: day, startDayNumber: entry.start) else { continue }
                    due[day - first] += 1
                    if !complete { dueMissed[day - first] = true }
                } else if complete {
                    frequencyDone[day - first] = true
                }
            }
        }
        return (0..<count).map { offset in
            let classification: DayClassification =
                due[offset] > 0 ? (dueMissed[offset] ? .incomplete : .complete) : (frequencyDone[offset] ? .complete : .rest)
            return (first + offset, classification)
        }
    }
}
