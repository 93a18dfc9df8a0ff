import Synchronization

/// A server-wide budget for the memory of pushes in progress: their bodies, the JSON trees
/// parsed from them and what the store builds from those, held until the push is answered.
/// A push reserves as its body arrives (a stalled upload holds what it sent, not what it
/// declared) and grows its share once the body is whole; one that would exceed the budget is
/// answered 503 with `Retry-After`, and one that alone needs more than the whole budget 413,
/// so concurrent maximum-size pushes cannot take the server's memory (and the pod's limit).
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

    public enum Refusal: Error, Sendable {
        /// Others hold too much of the budget now: retry shortly.
        case busy
        /// More than the whole budget: no retry helps.
        case largerThanBudget
    }

    /// Takes `bytes` more, or refuses. Never more than the capacity in all.
    func reserve(_ bytes: Int) throws(Refusal) {
        guard bytes <= capacityBytes else { throw .largerThanBudget }
        let taken = reserved.withLock { reserved in
            guard reserved + bytes <= capacityBytes else { return false }
            reserved += bytes
            return true
        }
        guard taken else { throw .busy }
    }

    func release(_ bytes: Int) {
        reserved.withLock { $0 -= bytes }
    }

    public var reservedBytes: Int { reserved.withLock { $0 } }

    /// One request's share, resized as its body arrives and is decoded; call `releaseAll()`
    /// when the request is answered (or cut off).
    public final class Reservation {
        private let budget: RequestBodyBudget
        public private(set) var bytes = 0

        public init(_ budget: RequestBodyBudget) { self.budget = budget }

        public func resize(to needed: Int) throws(Refusal) {
            if needed <= bytes {
                budget.release(bytes - needed)
                bytes = needed
                return
            }
            guard needed <= budget.capacityBytes else { throw .largerThanBudget }
            try budget.reserve(needed - bytes)
            bytes = needed
        }

        public func releaseAll() {
            budget.release(bytes)
            bytes = 0
        }
    }
}
