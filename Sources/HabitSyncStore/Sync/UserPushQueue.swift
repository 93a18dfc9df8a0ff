import Foundation
import Synchronization

/// Lets one push per user at a time ask the pool for a connection. Pushes of one user are
/// serialised by that user's row lock in PostgreSQL anyway; without this queue each waiting
/// push would hold a pool connection while it waits, so one user's burst could take every
/// connection and stall every other user. Beyond `maximumWaiting` queued pushes a user is
/// refused (`StoreError.tooManyPushes`, 429 at the edge) rather than queued without bound.
public final class UserPushQueue: Sendable {
    private struct Line {
        var waiting: [(id: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
    }

    private struct State {
        /// Users with a push in progress, and who waits behind it.
        var lines: [UserKey: Line] = [:]
        var nextWaiter: UInt64 = 0
    }

    public let maximumWaiting: Int
    private let state = Mutex(State())

    public init(maximumWaiting: Int = 8) {
        self.maximumWaiting = maximumWaiting
    }

    /// Runs `body` when no other push of this user runs in this process.
    public func serialised<T>(tenant: UUID, user: String, _ body: () async throws -> T) async throws -> T {
        let key = UserKey(tenant: tenant, user: user)
        try await enter(key)
        defer { leave(key) }
        return try await body()
    }

    private enum Admission {
        case now
        case queued(UInt64)
        case refused
    }

    private func enter(_ key: UserKey) async throws {
        let waiterID = state.withLock { state -> UInt64 in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let admission = state.withLock { state -> Admission in
                    guard var line = state.lines[key] else {
                        state.lines[key] = Line()
                        return .now
                    }
                    guard line.waiting.count < maximumWaiting else { return .refused }
                    line.waiting.append((waiterID, continuation))
                    state.lines[key] = line
                    return .queued(waiterID)
                }
                switch admission {
                case .now: continuation.resume()
                case .refused: continuation.resume(throwing: StoreError(.tooManyPushes, "this user already has \(maximumWaiting) pushes waiting; retry after the current ones are answered"))
                case .queued: break
                }
            }
        } onCancel: {
            // A cancelled waiter leaves the line; one already admitted runs on.
            let cancelled = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard var line = state.lines[key], let index = line.waiting.firstIndex(where: { $0.id == waiterID }) else { return nil }
                let continuation = line.waiting.remove(at: index).continuation
                state.lines[key] = line
                return continuation
            }
            cancelled?.resume(throwing: CancellationError())
        }
    }

    private func leave(_ key: UserKey) {
        let next = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            guard var line = state.lines[key] else { return nil }
            if line.waiting.isEmpty {
                state.lines[key] = nil
                return nil
            }
            let next = line.waiting.removeFirst().continuation
            state.lines[key] = line
            return next
        }
        next?.resume()
    }

    /// Users with a push in progress (for tests and metrics).
    public var activeUsers: Int { state.withLock { $0.lines.count } }
}
