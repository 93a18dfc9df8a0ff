import Foundation
import HabitSyncAuth
import HabitSyncDomain
import HabitSyncStore
import Logging
import Synchronization

/// Turns an `Authorization: Bearer …` header into a verified identity, or the reason it
/// cannot. A token whose `iss` a tenant configured (`tenant add-issuer`) is routed by `iss` and
/// `aud` to that tenant and verified with the provider's keys (`IssuerKeyCache`); otherwise its
/// `tid` names the tenant whose own keys (`tenant create`) must verify it. Nothing read from
/// the token is trusted until the signature verifies. Tenants' keys, issuers' configurations
/// and tokens that verified (`VerifiedTokenCache`) are cached briefly.
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
        /// Configurations by issuer; an unknown issuer (no configuration) is remembered in the
        /// same bounded way as an unknown tenant.
        /// By the token's `iss` as bytes (`ExactText`), as the database looks issuers up: two
        /// spellings of one text in Unicode are two issuers.
        var issuers: [ExactText: (configurations: [TenantIssuer], fetchedAt: ContinuousClock.Instant)] = [:]
        var unknownIssuerOrder: [ExactText] = []
    }

    private let tenants: TenantStore
    private let issuers: IssuerStore
    private let issuerKeys: IssuerKeyCache
    private let cacheLifetime: Duration
    private let maximumUnknownTenants: Int
    private let cache = Mutex(Cache())
    private let verifiedTokens: VerifiedTokenCache
    private let clock = ContinuousClock()

    /// - Parameters:
    ///   - cacheLifetime: how long a tenant's keys (or its absence) are reused before they are
    ///     read again (a rotated or retired key stops verifying after at most this long).
    ///   - maximumUnknownTenants: how many unknown tenant ids (and, apart, unknown issuers) are
    ///     remembered.
    public init(
        tenants: TenantStore, issuers: IssuerStore? = nil, issuerKeys: IssuerKeyCache? = nil,
        cacheLifetime: Duration = .seconds(10), maximumUnknownTenants: Int = 10_000
    ) {
        self.tenants = tenants
        self.issuers = issuers ?? IssuerStore(pool: tenants.pool)
        self.issuerKeys = issuerKeys ?? IssuerKeyCache(settings: IdentitySettings(), logger: Logger(label: "habitsync.identity"))
        self.cacheLifetime = cacheLifetime
        self.maximumUnknownTenants = maximumUnknownTenants
        verifiedTokens = VerifiedTokenCache(lifetime: cacheLifetime)
    }

    /// The identity, or why the token is refused (logged here with its details: issuer, kid,
    /// known kids; the caller answers with the code only). Throws what is not the token's
    /// fault: the database, or an issuer whose keys cannot be had (`IssuerKeysUnavailable`).
    public func identify(authorization: String?, logger: Logger) async throws -> Result<VerifiedIdentity, AuthenticationFailure> {
        guard let authorization, authorization.utf8.count <= 8192 else { return .failure(AuthenticationFailure(.unauthorized, "no token")) }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return .failure(AuthenticationFailure(.unauthorized, "not a Bearer token")) }
        let token = String(parts[1]).trimmingCharacters(in: .whitespaces)
        if let identity = verifiedTokens.identity(for: token) { return .success(identity) }
        let verified = try await verify(token, logger: logger)
        if case .success(let identity) = verified { verifiedTokens.remember(identity, for: token) }
        return verified
    }

    /// Every check of the token, in full.
    private func verify(_ token: String, logger: Logger) async throws -> Result<VerifiedIdentity, AuthenticationFailure> {
        do {
            let unverified = try UnverifiedToken(token)
            if let issuer = unverified.issuer {
                let configurations = try await configurations(issuer: issuer)
                if !configurations.isEmpty {
                    return .success(try await verifyWithIssuer(token, unverified, configurations))
                }
            }
            guard let tenantID = unverified.tenantID else {
                throw AuthenticationFailure(.unknownIssuer, "no tenant accepts iss \(unverified.issuer ?? "(none)"), and no tid")
            }
            let keys = try await keys(for: tenantID)
            guard !keys.isEmpty else { throw AuthenticationFailure(.unknownIssuer, "tid \(tenantID): no such tenant, disabled, or no active key") }
            return .success(try await AccessTokenVerifier.verify(token, unverified: unverified, keys: keys))
        } catch let failure as AuthenticationFailure {
            // Every refused request is worth a line to the admin who configured the issuer;
            // a flood of them is already one access-log line each.
            logger.info("token refused", metadata: ["code": "\(failure.code.rawValue)", "reason": "\(failure.reason)"])
            return .failure(failure)
        }
    }

    /// Route, choose the key (fetching the provider's keys again once for a new `kid`), verify.
    private func verifyWithIssuer(_ token: String, _ unverified: UnverifiedToken, _ configurations: [TenantIssuer]) async throws -> VerifiedIdentity {
        let tenant = try IssuerTokenVerifier.select(configurations, for: unverified)
        let configuration = tenant.configuration
        let algorithm = try IssuerTokenVerifier.algorithm(of: unverified, under: configuration)
        var keys = try await issuerKeys.keys(for: configuration)
        var key = try IssuerTokenVerifier.chooseKey(in: keys, for: unverified, algorithm: algorithm)
        if key == nil {
            keys = try await issuerKeys.keysAfterUnknownKey(for: configuration)
            key = try IssuerTokenVerifier.chooseKey(in: keys, for: unverified, algorithm: algorithm)
        }
        guard let key else {
            throw AuthenticationFailure(.unknownKey, "iss \(configuration.issuer): kid \(String(reflecting: String((unverified.keyID ?? "-").prefix(100)))) is not among \(keys.keyIDs)")
        }
        return try await IssuerTokenVerifier.verify(token, unverified: unverified, tenant: tenant, key: key)
    }

    private func configurations(issuer: String) async throws -> [TenantIssuer] {
        let now = clock.now
        let key = ExactText(issuer)
        if let cached = cache.withLock({ $0.issuers[key] }), now - cached.fetchedAt < cacheLifetime { return cached.configurations }
        let configurations = try await issuers.configurations(issuer: issuer)
        cache.withLock { cache in
            let isNew = cache.issuers.updateValue((configurations, now), forKey: key) == nil
            // Only unknown issuers are bounded: known ones were each added by an admin.
            if configurations.isEmpty, isNew { cache.unknownIssuerOrder.append(key) }
            while cache.unknownIssuerOrder.count > maximumUnknownTenants {
                let oldest = cache.unknownIssuerOrder.removeFirst()
                if cache.issuers[oldest]?.configurations.isEmpty == true { cache.issuers[oldest] = nil }
            }
        }
        return configurations
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

    /// How many verified tokens are remembered (for tests).
    public var verifiedTokensCached: Int { verifiedTokens.count }
}
