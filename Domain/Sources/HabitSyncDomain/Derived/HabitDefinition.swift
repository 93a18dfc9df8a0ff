import Foundation

/// What the derived-state rules need of a habit.
public struct HabitDefinition: Sendable, Equatable {
    public let id: UUID
    public let habitType: String
    public let schedule: HabitSchedule
    public let startDate: LocalDate
    public let endDate: LocalDate?
    public let deleted: Bool

    public init(id: UUID, habitType: String, schedule: HabitSchedule, startDate: LocalDate, endDate: LocalDate?, deleted: Bool = false) {
        self.id = id
        self.habitType = habitType
        self.schedule = schedule
        self.startDate = startDate
        self.endDate = endDate
        self.deleted = deleted
    }

    /// Fixed schedules make a habit due on certain days; frequency schedules never are (the
    /// user picks the days) and count only where they were completed.
    public var hasFixedSchedule: Bool {
        switch schedule {
        case .daily, .everyNDays, .specificWeekdays: true
        case .frequencyWeekly, .frequencyMonthly: false
        }
    }

    public func isInRange(_ date: LocalDate) -> Bool {
        startDate <= date && (endDate.map { date <= $0 } ?? true)
    }

    /// Whether the schedule makes the habit due on `date` (skips aside): the habit is not
    /// deleted, `date` is within start…end, and the schedule names the day.
    public func isDue(on date: LocalDate) -> Bool {
        guard !deleted, isInRange(date) else { return false }
        return isDue(dayNumber: date.dayNumber, startDayNumber: startDate.dayNumber)
    }

    /// The schedule rule alone, on day numbers (range and deletion checked by the caller).
    func isDue(dayNumber: Int, startDayNumber: Int) -> Bool {
        switch schedule {
        case .daily: return true
        case .everyNDays(let n): return (dayNumber - startDayNumber) % n == 0
        case .specificWeekdays(let days): return days.contains(LocalDate.weekday(dayNumber: dayNumber))
        case .frequencyWeekly, .frequencyMonthly: return false
        }
    }
}

extension LocalDate {
    /// The day of the week (1970-01-01 was a Thursday).
    public var weekday: Weekday { LocalDate.weekday(dayNumber: dayNumber) }

    static func weekday(dayNumber: Int) -> Weekday {
        Weekday.allCases[((dayNumber % 7) + 7 + 4) % 7]  // 1970-01-01 (day 0) was a Thursday
    }

    public func adding(days: Int) -> LocalDate { LocalDate(dayNumber: dayNumber + days) }

    /// The calendar day of `instant` in `timeZone`.
    public init(_ instant: Date, in timeZone: TimeZone) {
        let seconds = Int((instant.timeIntervalSince1970 + Double(timeZone.secondsFromGMT(for: instant))).rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : -((-seconds + 86_399) / 86_400)
        self.init(dayNumber: days)
    }
}
