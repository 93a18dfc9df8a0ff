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
        guard let first = classifier.firstDay, first <= today else {
            return GlobalStreak(currentStreak: 0, longestStreak: 0, totalCompleteDays: 0, lastCompleteDate: nil, computedFor: today)
        }
        var run = 0, longest = 0, total = 0
        var last: LocalDate?
        for dayNumber in first.dayNumber...today.dayNumber {
            let day = LocalDate(dayNumber: dayNumber)
            switch classifier.classify(day) {
            case .complete:
                run += 1
                total += 1
                last = day
                longest = max(longest, run)
            case .incomplete where dayNumber < today.dayNumber:
                run = 0
            case .incomplete, .rest:
                break  // today pending, or a rest day
            }
        }
        return GlobalStreak(currentStreak: run, longestStreak: longest, totalCompleteDays: total, lastCompleteDate: last, computedFor: today)
    }
}
