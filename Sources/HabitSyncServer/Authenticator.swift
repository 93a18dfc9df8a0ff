import Foundation
import HabitSyncAuth
import HabitSyncStore
import Logging
import Synchronization

/// Turns an `Authorization: Bearer …` header into a verified identity, or nothing. The tenant
/// is read from the token's `tid` only to find that tenant's keys; nothing is trusted until
/// the signature verifies with one of them. Keys are cached briefly per tenant.
///
/// Tenants that do not exist (or have no active key) are cached too, in a separate bounded
/// cache that forgets its oldest entries first: a flood of forged `tid`s costs one database
/// read per new id and can never evict the keys of real tenants.
public final class Authenticator: Sendable {
    private struct CachedKeys {
        let keys: [TenantKey]
        let fetchedAt: ContinuousClock.Instant
    }

    private struct Cache {
        var known: [UUID: CachedKeys] = [:]
        var unknown: [UUID: ContinuousClock.Instant] = [:]
        /// `unknown`'s ids, oldest first, for eviction.
        var unknownOrder: [UUID] = []
    }

    private let tenants: TenantStore
    private let cacheLifetime: Duration
    private let maximumUnknownTenants: Int
    private let cache = Mutex(Cache())
    private let clock = ContinuousClock()

    /// - Parameters:
    ///   - cacheLifetime: how long a tenant's keys (or its absence) are reused before they are
    ///     read again (a rotated or retired key stops verifying after at most this long).
    ///   - maximumUnknownTenants: how many unknown tenant ids are remembered.
    public init(tenants: TenantStore, cacheLifetime: Duration = .seconds(10), maximumUnknownTenants: Int = 10_000) {
        self.tenants = tenants
        self.cacheLifetime = cacheLifetime
        self.maximumUnknownTenants = maximumUnknownTenants
    }

    /// The identity, or `nil` for any failure (the reason is logged at debug level only).
    public func authenticate(authorization: String?, logger: Logger) async throws -> VerifiedIdentity? {
        guard let authorization, authorization.utf8.count <= 8192 else { return nil }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = String(parts[1]).trimmingCharacters(in: .whitespaces)
        do {
            let unverified = try UnverifiedToken(token)
            let keys = try await keys(for: unverified.tenantID)
            guard !keys.isEmpty else { throw AuthenticationFailure("unknown tenant or no active key") }
            return try await AccessTokenVerifier.verify(token, unverified: unverified, keys: keys)
        } catch let failure as AuthenticationFailure {
            logger.debug("token refused", metadata: ["reason": "\(failure.reason)"])
            return nil
        }
    }

    private func keys(for tenantID: UUID) async throws -> [TenantKey] {
        let now = clock.now
        let cached = cache.withLock { cache -> [TenantKey]? in
            if let known = cache.known[tenantID], now - known.fetchedAt < cacheLifetime { return known.keys }
            if let seen = cache.unknown[tenantID], now - seen < cacheLifetime { return [] }
            return nil
        }
        if let cached { return cached }
        let keys = try await tenants.activeKeys(tenantID: tenantID)
        cache.withLock { cache in
            if keys.isEmpty {
                cache.known[tenantID] = nil
                if cache.unknown.updateValue(now, forKey: tenantID) == nil { cache.unknownOrder.append(tenantID) }
                while cache.unknownOrder.count > maximumUnknownTenants {
                    cache.unknown[cache.unknownOrder.removeFirst()] = nil
                }
            } else {
                // Real tenants are few (each was created by an admin): this map stays small.
                cache.known[tenantID] = CachedKeys(keys: keys, fetchedAt: now)
                if cache.unknown.removeValue(forKey: tenantID) != nil { cache.unknownOrder.removeAll { $0 == tenantID } }
            }
        }
        return keys
    }

    /// How many unknown tenant ids are remembered (for tests).
    public var unknownTenantsCached: Int { cache.withLock { $0.unknown.count } }
}
