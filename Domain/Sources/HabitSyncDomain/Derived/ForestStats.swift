import Foundation

/// Focus statistics per user (seed 001, T011), with the server's completion rate
/// (erratum 7: completed / (completed + abandoned); running sessions are not counted).
public struct ForestStats: Sendable, Equatable {
    public let totalTrees: Int
    public let totalFocusTime: Double
    public let totalSessions: Int
    public let todaysTrees: Int
    public let todaysFocusTime: Double
    public let currentStreak: Int
    public let longestStreak: Int
    public let abandonedCount: Int
    public let completionRate: Double

    public static func compute(_ sessions: [FocusSessionRecord], today: LocalDate, timeZone: TimeZone) -> ForestStats {
        let completed = sessions.filter { $0.state == "completed" }
        let abandoned = sessions.filter { $0.state == "abandoned" }
        func day(_ session: FocusSessionRecord) -> LocalDate { LocalDate(session.endTime ?? session.startTime, in: timeZone) }
        let todays = completed.filter { day($0) == today }
        let days = Set(completed.map(day)).filter { $0 <= today }
        let finished = completed.count + abandoned.count
        return ForestStats(
            totalTrees: completed.count,
            totalFocusTime: completed.reduce(0) { $0 + $1.duration },
            totalSessions: finished,
            todaysTrees: todays.count,
            todaysFocusTime: todays.reduce(0) { $0 + $1.duration },
            currentStreak: ConsecutiveDays.current(days, today: today),
            longestStreak: ConsecutiveDays.longest(days),
            abandonedCount: abandoned.count,
            completionRate: finished > 0 ? Double(completed.count) / Double(finished) * 100 : 0)
    }
}

/// Runs of consecutive calendar days.
enum ConsecutiveDays {
    /// The run ending today, or yesterday when today has none yet.
    static func current(_ days: Set<LocalDate>, today: LocalDate) -> Int {
        var day = days.contains(today) ? today : today.adding(days: -1)
        var count = 0
        while days.contains(day) {
            count += 1
            day = day.adding(days: -1)
        }
        return count
    }

    static func longest(_ days: Set<LocalDate>) -> Int {
        var longest = 0
        for day in days where !days.contains(day.adding(days: -1)) {
            var length = 1
            while days.contains(day.adding(days: length)) { length += 1 }
            longest = max(longest, length)
        }
        return longest
    }
}
