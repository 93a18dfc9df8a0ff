/// Consecutive days with at least one conscious exit (the usageStreak record, seed 002);
/// today without an exit does not break the run yet.
public struct UsageStreak: Sendable, Equatable {
    public let startDate: LocalDate?
    public let currentDayCount: Int
    public let lastActivityDate: LocalDate?
    public let computedFor: LocalDate

    /// - Parameters:
    ///   - exitDays: days with a conscious exit; recent ones suffice, back past the run's start.
    ///   - latestExit: the latest exit day overall, when `exitDays` holds only recent days.
    public static func compute(exitDays: Set<LocalDate>, today: LocalDate, latestExit: LocalDate? = nil) -> UsageStreak {
        let past = exitDays.filter { $0 <= today }
        let count = ConsecutiveDays.current(past, today: today)
        let end = past.contains(today) ? today : today.adding(days: -1)
        return UsageStreak(
            startDate: count > 0 ? end.adding(days: 1 - count) : nil, currentDayCount: count,
            lastActivityDate: past.max() ?? latestExit, computedFor: today)
    }

    /// From the runs of exit days instead of the days themselves (`usage_exit_runs`): the
    /// latest run that starts by today, and the latest exit day overall. Same result as
    /// `compute(exitDays:today:)` over the days the runs cover.
    public static func compute(latestRun: ClosedRange<Int>?, latestExit: LocalDate?, today: LocalDate) -> UsageStreak {
        guard let run = latestRun, run.lowerBound <= today.dayNumber else {
            return UsageStreak(startDate: nil, currentDayCount: 0, lastActivityDate: latestExit, computedFor: today)
        }
        let last = min(run.upperBound, today.dayNumber)
        let current = last >= today.dayNumber - 1
        return UsageStreak(
            startDate: current ? LocalDate(dayNumber: run.lowerBound) : nil, currentDayCount: current ? last - run.lowerBound + 1 : 0,
            lastActivityDate: LocalDate(dayNumber: last), computedFor: today)
    }
}
