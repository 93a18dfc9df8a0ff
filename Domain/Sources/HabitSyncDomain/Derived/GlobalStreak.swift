/// The user's day streak over all habits (the globalStreak record).
public struct GlobalStreak: Sendable, Equatable {
    public let currentStreak: Int
    public let longestStreak: Int
    public let totalCompleteDays: Int
    public let lastCompleteDate: LocalDate?
    public let computedFor: LocalDate

    /// Walks every day from the first habit's start to `today`. Rest days are skipped; a past
    /// incomplete day breaks the run; today, while not complete, does not break it yet.
    public static func compute(_ classifier: DayClassifier, today: LocalDate) -> GlobalStreak {
        compute(classifier.classifyAll(through: today), today: today)
    }

    /// From days already classified (ascending, ending today).
    public static func compute(_ days: [(dayNumber: Int, classification: DayClassification)], today: LocalDate) -> GlobalStreak {
        var run = 0, longest = 0, total = 0
        var lastNumber: Int?
        for (dayNumber, classification) in days {
            switch classification {
            case .complete:
                run += 1
                total += 1
                lastNumber = dayNumber
                longest = max(longest, run)
            case .incomplete where dayNumber < today.dayNumber:
                run = 0
            case .incomplete, .rest:
                break  // today pending, or a rest day
            }
        }
        return GlobalStreak(currentStreak: run, longestStreak: longest, totalCompleteDays: total, lastCompleteDate: lastNumber.map(LocalDate.init(dayNumber:)), computedFor: today)
    }
}
