import Foundation

/// What validating a change needs besides the change itself: the server's clock (timestamps
/// may not lie in the future beyond the allowed skew) and the time zones the database knows.
public struct ValidationContext: Sendable {
    public var now: Date
    /// How far ahead of `now` a device's clock may be: an `updatedAt` beyond it is clamped, an
    /// event time (`timestamp`, `startTime`, …) beyond it is refused (`timestamp_in_future`).
    public var maximumSkew: TimeInterval
    public var timeZones: TimeZoneNames
    /// The push's `protocolVersion`: what a change may carry (`increment` from 2 on).
    public var protocolVersion: Int

    public init(now: Date, maximumSkew: TimeInterval, timeZones: TimeZoneNames, protocolVersion: Int = 1) {
        self.now = now
        self.maximumSkew = maximumSkew
        self.timeZones = timeZones
        self.protocolVersion = protocolVersion
    }

    /// For code without a database (a device validating before it queues a change, pure
    /// tests): Foundation's time zones and the server's default skew of five minutes.
    public static func standalone(now: Date = Date(), maximumSkew: TimeInterval = 300) -> ValidationContext {
        ValidationContext(now: now, maximumSkew: maximumSkew, timeZones: .foundation)
    }

    /// The latest event time accepted.
    public var latestAcceptedTime: Date { now.addingTimeInterval(maximumSkew) }
}

/// The time zone names a user may choose: exactly those PostgreSQL knows
/// (`pg_timezone_names`), that Foundation also knows with the same UTC offset, and that fit
/// the schema's pattern. The store reads them from the database once; `foundation` is for
/// code that has no database (pure tests).
public struct TimeZoneNames: Sendable, Equatable {
    public let names: Set<String>

    public init(_ names: some Sequence<String>) {
        self.names = Set(names.filter { TextRules.isTimeZoneName($0) && TimeZone(identifier: $0) != nil })
    }

    /// Whether `name` is one of the names, byte for byte: a `Set<String>` alone would also
    /// accept a canonically equivalent spelling ("Asia/\u{212A}olkata" with the Kelvin sign),
    /// which PostgreSQL does not know.
    public func contains(_ name: String) -> Bool { TextRules.isTimeZoneName(name) && names.contains(name) }

    /// Foundation's own list (no database at hand), and the device's own zone: on Linux
    /// `TimeZone.current` is read from /etc/localtime (`Etc/UTC` on Debian), a name the list
    /// leaves out and the server knows. A device never refuses its own zone; the server,
    /// which checks against PostgreSQL's names, has the last word.
    public static var foundation: TimeZoneNames { foundationNames }

    /// Built once: checking each of Foundation's ~600 names loads its rules, which was a
    /// measurable share of every push that needed a standalone context (issue 46).
    private static let foundationNames = TimeZoneNames(TimeZone.knownTimeZoneIdentifiers + ["UTC", TimeZone.current.identifier])
}
