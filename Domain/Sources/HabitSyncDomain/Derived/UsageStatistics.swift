import Foundation

/// Usage statistics per user (seed 002): time reclaimed by conscious exits, how many, the
/// average pause over all events, the share of exits among events, and a 30-day trend.
public struct UsageStatistics: Sendable, Equatable {
    public struct Day: Sendable, Equatable {
        public let date: LocalDate
        public let exits: Int
        public let events: Int
        public let pauseSeconds: Double
    }

    public let hoursReclaimed: Double
    public let totalConsciousExits: Int
    public let averagePauseTime: Double
    public let intentionalityScore: Double
    /// The 30 days ending today, oldest first, days without events included.
    public let trend: [Day]

    public static func compute(_ events: [UsageEventRecord], today: LocalDate, timeZone: TimeZone) -> UsageStatistics {
        let exits = events.filter { $0.eventType == "exit_to_focus" }
        var byDay: [LocalDate: (exits: Int, events: Int, pause: Double)] = [:]
        for event in events {
            let day = LocalDate(event.timestamp, in: timeZone)
            var entry = byDay[day] ?? (0, 0, 0)
            entry.events += 1
            entry.pause += event.pauseDuration
            if event.eventType == "exit_to_focus" { entry.exits += 1 }
            byDay[day] = entry
        }
        let trend = (0..<30).reversed().map { offset -> Day in
            let date = today.adding(days: -offset)
            let entry = byDay[date] ?? (0, 0, 0)
            return Day(date: date, exits: entry.exits, events: entry.events, pauseSeconds: entry.pause)
        }
        return UsageStatistics(
            hoursReclaimed: exits.reduce(0) { $0 + $1.pauseDuration } / 3600,
            totalConsciousExits: exits.count,
            averagePauseTime: events.isEmpty ? 0 : events.reduce(0) { $0 + $1.pauseDuration } / Double(events.count),
            intentionalityScore: events.isEmpty ? 0 : Double(exits.count) / Double(events.count),
            trend: trend)
    }
}
