import HabitSyncAuth
import HabitSyncStore
import Synchronization

/// How many statistics and export requests one user runs at once. Each holds a database
/// connection for as long as it computes; without a limit, twenty concurrent statistics of
/// one user held the pool long enough that another user's push waited 9.7 s. Beyond the
/// limit the request is refused at once (429 with `Retry-After`), never queued.
final class ExpensiveReadLimiter: Sendable {
    let perUser: Int
    private let running = Mutex<[UserKey: Int]>([:])
    private let metrics: ServerMetrics

    init(perUser: Int, metrics: ServerMetrics) {
        self.perUser = perUser
        self.metrics = metrics
    }

    /// Runs `body` if the user has fewer than `perUser` such reads running; else 429.
    func run<T: Sendable>(_ identity: VerifiedIdentity, kind: String, _ body: () async throws -> T) async throws -> T {
        let slot = try admit(identity, kind: kind)
        defer { slot.release() }
        return try await body()
    }

    /// Takes one of the user's places, or refuses (429). The place is given back by
    /// `release()`, or when the slot is dropped: a streamed response that is never written
    /// (the client went away first) must not keep it for good.
    func admit(_ identity: VerifiedIdentity, kind: String) throws -> Slot {
        let key = UserKey(tenant: identity.tenantID, user: identity.userID)
        let admitted = running.withLock { running in
            guard running[key, default: 0] < perUser else { return false }
            running[key, default: 0] += 1
            return true
        }
        guard admitted else {
            metrics.recordExpensiveReadRefused(kind)
            throw StoreError(.tooManyReads, "this user already runs \(perUser) statistics or export requests; retry when one has been answered")
        }
        return Slot { [self] in
            running.withLock { running in
                let left = running[key, default: 1] - 1
                running[key] = left > 0 ? left : nil
            }
        }
    }

    /// One admitted read's place; released once, explicitly or on deinit.
    final class Slot: Sendable {
        private let giveBack: Mutex<(@Sendable () -> Void)?>

        init(_ giveBack: @escaping @Sendable () -> Void) { self.giveBack = Mutex(giveBack) }

        func release() {
            giveBack.withLock { action in
                defer { action = nil }; return action
            }?()
        }

        deinit { release() }
    }
}
