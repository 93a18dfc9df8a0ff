import Foundation
import HabitSyncDomain

/// The clock rule for `updatedAt`: a device's next write is never behind the newest
/// `updatedAt` it has seen (its own or another device's), so a device whose clock runs slow
/// cannot write "into the past" and lose to what it already saw. Times are whole milliseconds,
/// as the server compares them.
public enum SyncClock {
    public static func nextUpdatedAt(now: Date, newestSeen: Date?) -> Date {
        let nowMilliseconds = WireTime.milliseconds(now)
        let floor = newestSeen.map { WireTime.milliseconds($0) + 1 } ?? nowMilliseconds
        return Date(timeIntervalSince1970: Double(max(nowMilliseconds, floor)) / 1000)
    }
}
