import Foundation
import HabitSyncAuth
import Synchronization

/// Tokens that verified in the last `lifetime`, by their exact text: a device sends the same
/// token with every request, and parsing its claims and checking its signature again was a
/// twentieth of a check-in's server CPU. An entry is used only within `lifetime` of its
/// verification (the keys' cache lifetime, so a retired key or a disabled tenant stops a
/// cached token as soon as it stops a fresh one) and before the token's own `exp`, without
/// the verifier's leeway; anything else is verified in full. Only verified tokens enter,
/// so a flood of forged ones cannot fill it; at `capacity` the older generation goes.
final class VerifiedTokenCache: Sendable {
    private struct Entry {
        let identity: VerifiedIdentity
        let verifiedAt: ContinuousClock.Instant
    }

    /// Two generations: entries go into `current`; when it is full, or older than the
    /// lifetime, it becomes `previous` (and the old `previous` is dropped).
    private struct Generations {
        var current: [String: Entry] = [:]
        var previous: [String: Entry] = [:]
        var currentSince: ContinuousClock.Instant
    }

    private let lifetime: Duration
    private let capacity: Int
    private let clock = ContinuousClock()
    private let generations: Mutex<Generations>

    init(lifetime: Duration, capacity: Int = 10_000) {
        self.lifetime = lifetime
        self.capacity = capacity
        generations = Mutex(Generations(currentSince: clock.now))
    }

    /// The identity `token` verified as, if it did so within the lifetime and has not expired.
    func identity(for token: String, now date: Date = Date()) -> VerifiedIdentity? {
        guard lifetime > .zero else { return nil }
        let now = clock.now
        let entry = generations.withLock { $0.current[token] ?? $0.previous[token] }
        guard let entry, now - entry.verifiedAt < lifetime, date < entry.identity.expiresAt else { return nil }
        return entry.identity
    }

    func remember(_ identity: VerifiedIdentity, for token: String) {
        guard lifetime > .zero else { return }
        let now = clock.now
        generations.withLock { generations in
            if generations.current.count >= capacity || now - generations.currentSince >= lifetime {
                generations.previous = generations.current
                generations.current = [:]
                generations.currentSince = now
            }
            generations.current[token] = Entry(identity: identity, verifiedAt: now)
        }
    }

    /// How many tokens are held (for tests).
    var count: Int { generations.withLock { $0.current.count + $0.previous.count } }
}
