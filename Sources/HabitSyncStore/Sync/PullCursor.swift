import Foundation
import HabitSyncDomain

/// The opaque pull cursor: the last `serverVersion` a device has seen, base64url-encoded with
/// a format tag so that it can change without breaking devices in the field.
///
/// `v3:<version>:<initial>:<collections>:<epoch>` also carries, during an initial sync, the
/// user's counter when it began (tombstones at or below it are skipped, and only a purge past
/// it expires the cursor), the collections it was pulled with (a hexadecimal bit mask over
/// `SyncCollection.allCases`), and the epoch it was issued in (`SyncEpoch`). `v2` (the same
/// without the epoch) and `v1:<version>` cursors from earlier servers are still accepted, `v1`
/// for any collections.
///
/// `v4:<version>:<initial>:<collections>:<epoch>:<phase>:<boundary>:<recent>:<window>:<left>:<later>`
/// adds the phase (`PullPhase`), the user's counter when the recent phase ended (`boundary`:
/// the history phase sends every record above it, dated or not), the first recent day and
/// the device's window (days since 1970-01-01, `-` for none), and the estimate of what is
/// left in this phase and in the phases after it.
public struct PullCursor: Sendable, Equatable {
    public let version: Int64
    public let initialSyncFloor: Int64?
    /// Nil: any collections (a v1 cursor).
    public let collections: UInt32?
    /// Nil: a cursor of an earlier server (v1, v2).
    public let epoch: SyncEpoch?
    /// Nil: a cursor of an earlier server (v1–v3), which pulls in version order only.
    public let phase: PullPhase?
    public let boundary: Int64
    public let recentFrom: LocalDate?
    public let window: LocalDate?
    public let remaining: Int64
    public let later: Int64

    public init(
        version: Int64, initialSyncFloor: Int64? = nil, collections: UInt32? = PullCursor.filter(SyncCollection.allCases), epoch: SyncEpoch? = nil,
        phase: PullPhase? = nil, boundary: Int64 = 0, recentFrom: LocalDate? = nil, window: LocalDate? = nil, remaining: Int64 = 0, later: Int64 = 0
    ) {
        self.version = version
        self.initialSyncFloor = initialSyncFloor
        self.collections = collections
        self.epoch = epoch
        self.phase = phase
        self.boundary = boundary
        self.recentFrom = recentFrom
        self.window = window
        self.remaining = remaining
        self.later = later
    }

    /// The highest version this cursor says its device has seen (or that existed when its
    /// first sync began): more than the user's counter is another timeline.
    public var seenVersion: Int64 { max(version, initialSyncFloor ?? 0, boundary) }

    public static func filter(_ collections: [SyncCollection]) -> UInt32 {
        collections.reduce(0) { mask, collection in
            guard let bit = SyncCollection.allCases.firstIndex(of: collection) else { return mask }
            return mask | (1 << UInt32(bit))
        }
    }

    public init?(_ text: String) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard text.count <= 256, let data = Data(base64Encoded: base64), let decoded = String(data: data, encoding: .utf8) else { return nil }
        let parts = decoded.split(separator: ":", omittingEmptySubsequences: false)
        switch parts.first {
        case "v1":
            guard parts.count == 2, let version = Int64(parts[1]), version >= 0 else { return nil }
            self.init(version: version, initialSyncFloor: nil, collections: nil)
        case "v2", "v3":
            guard parts.count == (parts.first == "v3" ? 5 : 4), let version = Int64(parts[1]), version >= 0 else { return nil }
            var floor: Int64?
            if parts[2] != "-" {
                guard let value = Int64(parts[2]), value >= 0 else { return nil }
                floor = value
            }
            guard let mask = UInt32(parts[3], radix: 16), mask != 0, mask < (1 << UInt32(SyncCollection.allCases.count)) else { return nil }
            var epoch: SyncEpoch?
            if parts.count == 5 {
                guard let parsed = SyncEpoch(String(parts[4])) else { return nil }
                epoch = parsed
            }
            self.init(version: version, initialSyncFloor: floor, collections: mask, epoch: epoch)
        case "v4":
            guard parts.count == 11, let version = Int64(parts[1]), version >= 0, let phase = PullPhase(tag: parts[5]),
                let boundary = Int64(parts[6]), boundary >= 0, let remaining = Int64(parts[9]), remaining >= 0,
                let later = Int64(parts[10]), later >= 0,
                let mask = UInt32(parts[3], radix: 16), mask != 0, mask < (1 << UInt32(SyncCollection.allCases.count))
            else { return nil }
            var floor: Int64?
            if parts[2] != "-" {
                guard let value = Int64(parts[2]), value >= 0 else { return nil }
                floor = value
            }
            var epoch: SyncEpoch?
            if parts[4] != "-" {
                guard let parsed = SyncEpoch(String(parts[4])) else { return nil }
                epoch = parsed
            }
            // A first sync's phases need their first recent day.
            guard let recentFrom = Self.day(parts[7]), let window = Self.day(parts[8]), phase == .changes || recentFrom != nil else { return nil }
            self.init(
                version: version, initialSyncFloor: floor, collections: mask, epoch: epoch, phase: phase, boundary: boundary,
                recentFrom: recentFrom, window: window, remaining: remaining, later: later)
        default:
            return nil
        }
    }

    /// `-`: none (`.some(nil)`); a day number of years 1970–9999; anything else: not a cursor.
    private static func day(_ text: Substring) -> LocalDate?? {
        if text == "-" { return .some(nil) }
        guard let number = Int(text), let first = LocalDate(year: LocalDate.recordYears.lowerBound, month: 1, day: 1),
            let last = LocalDate(year: LocalDate.recordYears.upperBound, month: 12, day: 31),
            (first.dayNumber...last.dayNumber).contains(number)
        else { return nil }
        return .some(LocalDate(dayNumber: number))
    }

    public var text: String {
        let plain: String
        if let phase, let collections {
            plain = [
                "v4", String(version), initialSyncFloor.map(String.init) ?? "-", String(collections, radix: 16), epoch?.text ?? "-", phase.tag,
                String(boundary), recentFrom.map { String($0.dayNumber) } ?? "-", window.map { String($0.dayNumber) } ?? "-",
                String(remaining), String(later),
            ].joined(separator: ":")
        } else if let collections {
            plain =
                "v\(epoch == nil ? 2 : 3):\(version):\(initialSyncFloor.map(String.init) ?? "-"):\(String(collections, radix: 16))"
                + (epoch.map { ":" + $0.text } ?? "")
        } else {
            plain = "v1:\(version)"
        }
        return Data(plain.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
