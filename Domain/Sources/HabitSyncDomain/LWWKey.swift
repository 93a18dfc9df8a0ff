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

    private init(milliseconds: Int64, deviceID: String) {
        self.updatedAtMilliseconds = milliseconds
        self.deviceID = deviceID
    }

    /// Before every write: the key of a field nobody has set (a default).
    public static let never = LWWKey(milliseconds: .min, deviceID: "")

    /// The time half as a `Date`, to the millisecond.
    public var updatedAt: Date { Date(timeIntervalSince1970: Double(updatedAtMilliseconds) / 1000) }

    public static func < (lhs: LWWKey, rhs: LWWKey) -> Bool {
        if lhs.updatedAtMilliseconds != rhs.updatedAtMilliseconds { return lhs.updatedAtMilliseconds < rhs.updatedAtMilliseconds }
        return Array(lhs.deviceID.utf8).lexicographicallyPrecedes(Array(rhs.deviceID.utf8))
    }

    /// Equal as PostgreSQL sees them: device ids by their bytes. (Swift's `String ==` would
    /// call "café" and "cafe" + U+0301 one device while `<` orders them: two writes the
    /// database ordered would look like the same write.)
    public static func == (lhs: LWWKey, rhs: LWWKey) -> Bool {
        lhs.updatedAtMilliseconds == rhs.updatedAtMilliseconds && lhs.deviceID.utf8.elementsEqual(rhs.deviceID.utf8)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(updatedAtMilliseconds)
        for byte in deviceID.utf8 { hasher.combine(byte) }
    }
}
