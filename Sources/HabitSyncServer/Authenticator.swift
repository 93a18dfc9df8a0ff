import Foundation
import HabitSyncAuth
import HabitSyncStore
import Logging
import Synchronization

/// Turns an `Authorization: Bearer …` header into a verified identity, or nothing. The tenant
/// is read from the token's `tid` only to find that tenant's keys; nothing is trusted until
/// the signature verifies with one of them. Keys are cached briefly per tenant.
public final class Authenticator: Sendable {
    private struct CachedKeys {
        let keys: [TenantKey]
        let fetchedAt: ContinuousClock.Instant
    }

    private let tenants: TenantStore
    private let cacheLifetime: Duration
    private let cache = Mutex<[UUID: CachedKeys]>([:])
    private let clock = ContinuousClock()

    /// - Parameter cacheLifetime: how long a tenant's keys are reused before they are read
    ///   again (a rotated or retired key stops verifying after at most this long).
    public init(tenants: TenantStore, cacheLifetime: Duration = .seconds(10)) {
        self.tenants = tenants
        self.cacheLifetime = cacheLifetime
    }

    /// The identity, or `nil` for any failure (the reason is logged at debug level only).
    public func authenticate(authorization: String?, logger: Logger) async throws -> VerifiedIdentity? {
        guard let authorization, authorization.count <= 8192 else { return nil }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = String(parts[1]).trimmingCharacters(in: .whitespaces)
        do {
            let unverified = try UnverifiedToken(token)
            let keys = try await keys(for: unverified.tenantID)
            return try await AccessTokenVerifier.verify(token, unverified: unverified, keys: keys)
        } catch let failure as AuthenticationFailure {
            logger.debug("token refused", metadata: ["reason": "\(failure.reason)"])
            return nil
        }
    }

    private func keys(for tenantID: UUID) async throws -> [TenantKey] {
        let now = clock.now
        if let cached = cache.withLock({ $0[tenantID] }), now - cached.fetchedAt < cacheLifetime {
            return cached.keys
        }
        let keys = try await tenants.activeKeys(tenantID: tenantID)
        cache.withLock { cache in
            // Bounded: unknown tenant ids from forged tokens must not grow it without limit.
            if cache.count > 10_000 { cache.removeAll() }
            cache[tenantID] = CachedKeys(keys: keys, fetchedAt: now)
        }
        return keys
    }
}
