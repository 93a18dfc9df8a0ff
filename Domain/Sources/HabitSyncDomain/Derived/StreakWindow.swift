/// The days a recompute of the global streak covers, split into what it reads raw and what it
/// may take from stored month summaries (`StreakSummary`).
///
/// The streak looks back ten years (`DayClassifier.historyDays`) from today, and no further
/// than the earliest habit's start. Whole months before today's month are summarised and may
/// be stored: their days are all past. Today's month is always read raw (today is special,
/// and its days change daily), and so is the window's first month when the window starts in
/// the middle of it (that month's summary would change as the window moves).
public struct StreakWindow: Sendable, Equatable {
    public let today: LocalDate
    /// Ten years before today: no day before it counts.
    public let windowStart: LocalDate
    /// The first day of today's month.
    public let currentMonth: LocalDate
    /// Days before the first whole month, read raw (the window starts mid-month).
    public let leadingDays: ClosedRange<Int>?
    /// Whole past months, by their first day, ascending.
    public let closedMonths: [LocalDate]
    /// Today's month from its first counted day through today, read raw.
    public let currentDays: ClosedRange<Int>?

    /// - Parameter earliestStart: the earliest start date of the user's live habits.
    public init(today: LocalDate, earliestStart: LocalDate?) {
        self.today = today
        windowStart = today.adding(days: -DayClassifier.historyDays)
        currentMonth = today.firstOfMonth
        guard let earliestStart, earliestStart <= today else {
            leadingDays = nil
            closedMonths = []
            currentDays = nil
            return
        }
        let first = max(windowStart, earliestStart)
        guard first < currentMonth else {
            leadingDays = nil
            closedMonths = []
            currentDays = first.dayNumber...today.dayNumber
            return
        }
        currentDays = currentMonth.dayNumber...today.dayNumber
        var month = first.firstOfMonth
        if month == windowStart.firstOfMonth && windowStart.day != 1 {
            leadingDays = windowStart.dayNumber...(windowStart.firstOfNextMonth.dayNumber - 1)
            month = windowStart.firstOfNextMonth
        } else {
            leadingDays = nil
        }
        var months: [LocalDate] = []
        while month < currentMonth {
            months.append(month)
            month = month.firstOfNextMonth
        }
        closedMonths = months
    }

    /// The days of a month, by day number.
    public static func days(of month: LocalDate) -> ClosedRange<Int> {
        month.dayNumber...(month.firstOfNextMonth.dayNumber - 1)
    }
}
