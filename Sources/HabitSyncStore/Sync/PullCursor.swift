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
public struct PullCursor: Sendable, Equatable {
    public let version: Int64
    public let initialSyncFloor: Int64?
    /// Nil: any collections (a v1 cursor).
    public let collections: UInt32?
    /// Nil: a cursor of an earlier server (v1, v2).
    public let epoch: SyncEpoch?

    public init(version: Int64, initialSyncFloor: Int64? = nil, collections: UInt32? = PullCursor.filter(SyncCollection.allCases), epoch: SyncEpoch? = nil) {
        self.version = version
        self.initialSyncFloor = initialSyncFloor
        self.collections = collections
        self.epoch = epoch
    }

    public static func filter(_ collections: [SyncCollection]) -> UInt32 {
        collections.reduce(0) { mask, collection in
            guard let bit = SyncCollection.allCases.firstIndex(of: collection) else { return mask }
            return mask | (1 << UInt32(bit))
        }
    }

    public init?(_ text: String) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard text.count <= 128, let data = Data(base64Encoded: base64), let decoded = String(data: data, encoding: .utf8) else { return nil }
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
        default:
            return nil
        }
    }

    public var text: String {
        let plain: String
        if let collections {
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
