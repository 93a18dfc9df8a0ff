import Synchronization

/// A server-wide budget for the memory of pushes in progress: their bodies, the JSON trees
/// parsed from them and what the store builds from those, held until the push is answered. A push that would exceed
/// it is answered 503 with `Retry-After` before its body is read, so concurrent maximum-size
/// pushes cannot take the server's memory (and the pod's limit) with them.
public final class RequestBodyBudget: Sendable {
    public let capacityBytes: Int
    private let reserved = Mutex(0)

    public init(capacityBytes: Int) {
        self.capacityBytes = capacityBytes
    }

    /// What a push of `bytes` may hold at its peak, until it is answered: the body and the
    /// parser's copy, the validated changes, the statements' array parameters, the rows read
    /// back and the response — about ten times the body, measured with `habitsync-bench
    /// --hostile-memory` (BENCHMARKS.md) — plus the JSON tree, which the parser's limits keep
    /// under 32 MiB whatever the body (a tree of small values can be twelve times the text).
    public static func estimate(bodyBytes bytes: Int) -> Int {
        bytes * 10 + min(bytes * 12, 32 << 20)
    }

    /// Reserves `bytes`, or returns false when the budget cannot take them now. A single
    /// request larger than the whole budget is admitted when nothing else is reserved, so a
    /// configured body limit above the budget degrades to one at a time rather than never.
    public func reserve(_ bytes: Int) -> Bool {
        reserved.withLock { reserved in
            guard reserved == 0 || reserved + bytes <= capacityBytes else { return false }
            reserved += bytes
            return true
        }
    }

    public func release(_ bytes: Int) {
        reserved.withLock { $0 -= bytes }
    }

    public var reservedBytes: Int { reserved.withLock { $0 } }
}
