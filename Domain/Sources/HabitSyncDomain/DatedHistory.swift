import Foundation

/// The records that are a user's history, dated by a day or a time: what a first sync sends
/// after the main screen's records, and what a device with a rolling window never receives
/// (docs/protocol.md, "A first sync in phases", "A rolling window"). The server and the SDK
/// decide with the same rules, so a windowed device's digests compare what both hold.
public enum DatedHistory {
    /// The days a first sync counts as recent: today in the user's zone and the 34 before.
    public static let recentDays = 35

    /// How a record of a collection is dated: by its calendar day (`day`, in the user's zone)
    /// where it has one, else by its instant (`time`). Nil: the collection is not history
    /// (habits, reminders, settings, selected apps, achievements, the derived records), and
    /// every one of its records is recent and inside any window.
    public struct Dating: Sendable, Equatable {
        public let day: String?
        public let time: String?
    }

    public static func dating(of collection: SyncCollection) -> Dating? {
        switch collection {
        case .dailyProgress: Dating(day: "date", time: nil)
        // An award's `date` is the day it is for; the server writes awards for past days
        // (a backfill, an import) at the time it computes them.
        case .xpTransactions: Dating(day: "date", time: "timestamp")
        case .usageEvents: Dating(day: nil, time: "timestamp")
        case .focusSessions: Dating(day: nil, time: "startTime")
        case .habits, .reminders, .achievements, .selectedApps, .userSettings, .globalStreak, .userProgress, .usageStreak: nil
        }
    }

    /// The first instant of `date` in any time zone, rounded down to a whole UTC day: the day
    /// before at 00:00 UTC (the earliest zone, UTC+14, starts a day at 10:00 UTC the day
    /// before). A timed record belongs to the days from `date` on when its time is at or after
    /// this; one of the day before may be counted with them, never one of `date` left out.
    public static func earliestInstant(of date: LocalDate) -> Date {
        Date(timeIntervalSince1970: Double(date.dayNumber - 1) * 86_400)
    }

    /// The first recent day of a first sync that begins on `today` (the user's today).
    public static func recentFrom(today: LocalDate) -> LocalDate {
        LocalDate(dayNumber: today.dayNumber - (recentDays - 1))
    }

    /// Whether a record (its wire fields) is dated on or after `date`. A record without its
    /// date (a tombstone) is: it cannot be placed, and a delete is never withheld.
    public static func isOnOrAfter(_ date: LocalDate, collection: SyncCollection, record: [String: JSONValue]?) -> Bool {
        guard let dating = dating(of: collection), let record else { return true }
        if let field = dating.day, case .string(let text)? = record[field], let day = LocalDate(text) { return day >= date }
        if let field = dating.time, case .string(let text)? = record[field], let time = WireTime.parse(text) { return time >= earliestInstant(of: date) }
        return true
    }
}
