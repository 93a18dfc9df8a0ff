import Foundation

/// The W3C Trace Context every request of a `sync()` carries (`traceparent`), so that the
/// server's traces of that sync can be found from the device: one trace id for the whole
/// sync (`SyncEngine.Report.traceID`), a new parent id for each request. The device records
/// no spans of its own. The sampled flag is set, so a server that follows its callers'
/// sampling (OpenTelemetry's default) traces every sync; one that samples a share samples by
/// trace id, a whole sync or none of it (docs/operations.md, "Tracing").
struct SyncTrace: Sendable {
    /// 32 lowercase hexadecimal digits, never all zero (W3C: an invalid trace id).
    let traceID: String

    /// The sync now running on this task, if any.
    @TaskLocal static var current: SyncTrace?

    /// The first half is never zero, so neither is the whole.
    init() {
        traceID = Self.hex(UInt64.random(in: 1...UInt64.max)) + Self.hex(UInt64.random(in: 0...UInt64.max))
    }

    /// The header of one request: a parent id of its own, never all zero.
    func traceParent() -> String {
        "00-\(traceID)-\(Self.hex(UInt64.random(in: 1...UInt64.max)))-01"
    }

    /// 16 lowercase hexadecimal digits.
    static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
