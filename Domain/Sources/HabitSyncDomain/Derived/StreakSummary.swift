/// What the global streak needs to know of a stretch of past days, small enough to store per
/// month: two adjacent stretches combine into the summary of both, so a streak over ten years
/// is a fold over about 120 stored months instead of a walk over 3,650 classified days.
///
/// Every day in a summary is past: an incomplete day breaks the run. Today, whose incomplete
/// does not break the run yet, is added as `.today(_)`.
public struct StreakSummary: Sendable, Equatable {
    /// Complete days.
    public var completeDays: Int
    /// The latest complete day (a day number), if any.
    public var lastCompleteDay: Int?
    /// Whether an incomplete day breaks the stretch.
    public var hasBreak: Bool
    /// Complete days before the first break (all of them without a break).
    public var leadingRun: Int
    /// Complete days after the last break (all of them without a break).
    public var trailingRun: Int
    /// The longest run of complete days not broken inside the stretch.
    public var longestRun: Int

    public init(completeDays: Int, lastCompleteDay: Int?, hasBreak: Bool, leadingRun: Int, trailingRun: Int, longestRun: Int) {
        self.completeDays = completeDays
        self.lastCompleteDay = lastCompleteDay
        self.hasBreak = hasBreak
        self.leadingRun = leadingRun
        self.trailingRun = trailingRun
        self.longestRun = longestRun
    }

    /// A stretch with nothing in it (or only rest days).
    public static let empty = StreakSummary(completeDays: 0, lastCompleteDay: nil, hasBreak: false, leadingRun: 0, trailingRun: 0, longestRun: 0)

    /// One past day.
    public init(day: Int, _ classification: DayClassification) {
        switch classification {
        case .complete: self.init(completeDays: 1, lastCompleteDay: day, hasBreak: false, leadingRun: 1, trailingRun: 1, longestRun: 1)
        case .incomplete: self.init(completeDays: 0, lastCompleteDay: nil, hasBreak: true, leadingRun: 0, trailingRun: 0, longestRun: 0)
        case .rest: self = .empty
        }
    }

    /// Today: complete extends the run, anything else leaves it as it is.
    public static func today(_ day: Int, _ classification: DayClassification) -> StreakSummary {
        classification == .complete ? StreakSummary(day: day, .complete) : .empty
    }

    /// Past days in ascending order.
    public init<Days: Sequence>(days: Days) where Days.Element == (dayNumber: Int, classification: DayClassification) {
        self = days.reduce(.empty) { $0.followed(by: StreakSummary(day: $1.dayNumber, $1.classification)) }
    }

    /// This stretch, then `later` right after it.
    public func followed(by later: StreakSummary) -> StreakSummary {
        StreakSummary(
            completeDays: completeDays + later.completeDays,
            lastCompleteDay: later.lastCompleteDay ?? lastCompleteDay,
            hasBreak: hasBreak || later.hasBreak,
            leadingRun: hasBreak ? leadingRun : completeDays + later.leadingRun,
            trailingRun: later.hasBreak ? later.trailingRun : trailingRun + later.completeDays,
            longestRun: max(longestRun, later.longestRun, trailingRun + later.leadingRun))
    }

    /// The globalStreak record of a history summarised up to and including today.
    public func streak(today: LocalDate) -> GlobalStreak {
        GlobalStreak(
            currentStreak: trailingRun, longestStreak: longestRun, totalCompleteDays: completeDays,
            lastCompleteDate: lastCompleteDay.map(LocalDate.init(dayNumber:)), computedFor: today)
    }
}
