import Foundation

/// The last-writer-wins key of a write: its `updatedAt` (to the millisecond), then the device
/// id compared as bytes (PostgreSQL's `COLLATE "C"`), so every replica orders writes alike.
public struct LWWKey: Sendable, Hashable, Comparable {
    public let updatedAtMilliseconds: Int64
    public let deviceID: String

    public init(updatedAt: Date, deviceID: String) {
        self.updatedAtMilliseconds = WireTime.milliseconds(updatedAt)
        self.deviceID = deviceID
    }

    public static func < (lhs: LWWKey, rhs: LWWKey) -> Bool {
        if lhs.updatedAtMilliseconds != rhs.updatedAtMilliseconds { return lhs.updatedAtMilliseconds < rhs.updatedAtMilliseconds }
        return Array(lhs.deviceID.utf8).lexicographicallyPrecedes(Array(rhs.deviceID.utf8))
    }
}
