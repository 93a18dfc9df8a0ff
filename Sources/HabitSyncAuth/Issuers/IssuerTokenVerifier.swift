import Foundation
import JWTKit

/// Verifies a token of an identity provider against one tenant's configuration of it: the
/// routing (`select`), the algorithm and key (`chooseKey`), then the signature and the claims
/// (`verify`). Each refusal carries the code an admin can act on; the reason is for the log.
public enum IssuerTokenVerifier {
    /// The one configuration among those of the token's issuer (across tenants) that accepts
    /// its audience. Tenants sharing an issuer have disjoint audiences (`tenant add-issuer`
    /// refuses overlaps); were two to match anyway, the token is refused, never guessed.
    public static func select(_ configurations: [TenantIssuer], for token: UnverifiedToken) throws(AuthenticationFailure) -> TenantIssuer {
        guard let issuer = token.issuer, !configurations.isEmpty else {
            throw AuthenticationFailure(.unknownIssuer, "no tenant accepts iss \(token.issuer ?? "(none)")")
        }
        let matching = configurations.filter { $0.configuration.acceptsAudience(of: token) }
        guard matching.count == 1 else {
            let accepted = configurations.flatMap(\.configuration.audiences)
            // The token's values are the caller's: a few, shortened, escaped by the array's description.
            let named = token.audiences.prefix(5).map { $0.prefix(100) }
            throw AuthenticationFailure(
                .audienceMismatch,
                matching.isEmpty
                    ? "iss \(issuer): aud \(named) is none of \(accepted)"
                    : "iss \(issuer): aud \(named) matches \(matching.count) tenants")
        }
        return matching[0]
    }

    /// The accepted algorithm the token's header names.
    public static func algorithm(of token: UnverifiedToken, under configuration: IssuerConfiguration) throws(AuthenticationFailure) -> IssuerAlgorithm {
        guard let algorithm = IssuerAlgorithm(rawValue: token.algorithm), configuration.algorithms.contains(algorithm) else {
            throw AuthenticationFailure(
                .algorithmNotAllowed, "iss \(configuration.issuer): alg \(String(reflecting: String(token.algorithm.prefix(32)))) is not one of \(configuration.algorithms.map(\.rawValue))")
        }
        return algorithm
    }

    /// The key of `keys` that must verify the token, or nil when its `kid` is not among them
    /// (the caller refreshes the keys once, then refuses with `unknown_key`).
    public static func chooseKey(in keys: IssuerKeySet, for token: UnverifiedToken, algorithm: IssuerAlgorithm) throws(AuthenticationFailure) -> IssuerKey? {
        let key: IssuerKey
        if let keyID = token.keyID {
            guard let found = keys.key(id: keyID) else { return nil }
            key = found
        } else {
            // No kid: only a set with exactly one key that fits decides which key it is.
            let fitting = keys.keys.filter { $0.fits(algorithm) }
            guard fitting.count == 1 else {
                throw AuthenticationFailure(.unknownKey, "no kid, and \(fitting.count) keys fit \(algorithm.rawValue)")
            }
            key = fitting[0]
        }
        guard key.fits(algorithm) else {
            throw AuthenticationFailure(
                .algorithmNotAllowed,
                "kid \(String(reflecting: String((token.keyID ?? "-").prefix(100)))) is a \(key.keyType) key\(key.declaredAlgorithm.map { " for \($0)" } ?? ""), the token says \(algorithm.rawValue)")
        }
        return key
    }

    /// The signature, then the times and the user claim.
    public static func verify(
        _ token: String, unverified: UnverifiedToken, tenant: TenantIssuer, key: IssuerKey,
        now: Date = Date()
    ) async throws(AuthenticationFailure) -> VerifiedIdentity {
        let configuration = tenant.configuration
        do {
            _ = try await key.collection.verify(token, as: SignatureOnly.self)
        } catch {
            throw AuthenticationFailure(.signatureInvalid, "iss \(configuration.issuer): kid \(String(reflecting: String((unverified.keyID ?? "-").prefix(100)))) does not verify the signature")
        }
        let expiresAt = try TokenTimes.check(unverified, now: now, source: "iss \(configuration.issuer)")
        let lifetime = expiresAt - (unverified.issuedAt ?? now.timeIntervalSince1970)
        guard lifetime <= Double(configuration.maximumLifetime) + AccessTokenVerifier.leeway else {
            throw AuthenticationFailure(.lifetimeTooLong, "iss \(configuration.issuer): lives \(TokenTimes.seconds(lifetime)) s, at most \(configuration.maximumLifetime) s accepted")
        }
        guard let subject = unverified.stringClaims[configuration.userClaim] else {
            throw AuthenticationFailure(.tokenInvalid, "iss \(configuration.issuer): no string claim \(configuration.userClaim) naming the user")
        }
        if let problem = SubjectRules.problem(subject) {
            throw AuthenticationFailure(.tokenInvalid, "iss \(configuration.issuer): \(configuration.userClaim) \(problem)")
        }
        return VerifiedIdentity(tenantID: tenant.tenantID, userID: subject, expiresAt: Date(timeIntervalSince1970: expiresAt))
    }
}

/// A tenant's configuration of an issuer.
public struct TenantIssuer: Sendable, Equatable {
    public let tenantID: UUID
    public let configuration: IssuerConfiguration
    public init(tenantID: UUID, configuration: IssuerConfiguration) {
        self.tenantID = tenantID
        self.configuration = configuration
    }
}

/// jwt-kit checks the signature; the claims are read from `UnverifiedToken` once it has.
struct SignatureOnly: JWTPayload {
    init(from decoder: any Decoder) throws {}
    func encode(to encoder: any Encoder) throws {}
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// `exp`, `nbf` and `iat` with `AccessTokenVerifier.leeway` of clock skew.
enum TokenTimes {
    /// `exp`, once the token is within its validity window.
    static func check(_ token: UnverifiedToken, now: Date, source: String) throws(AuthenticationFailure) -> Double {
        let now = now.timeIntervalSince1970
        let leeway = AccessTokenVerifier.leeway
        guard let expiresAt = token.expiresAt else { throw AuthenticationFailure(.tokenInvalid, "\(source): no exp") }
        guard expiresAt + leeway >= now else { throw AuthenticationFailure(.tokenExpired, "\(source): expired \(TokenTimes.seconds(now - expiresAt)) s ago") }
        if let notBefore = token.notBefore, notBefore - leeway > now {
            throw AuthenticationFailure(.tokenInvalid, "\(source): not valid for another \(TokenTimes.seconds(notBefore - now)) s (nbf)")
        }
        if let issuedAt = token.issuedAt, issuedAt - leeway > now {
            throw AuthenticationFailure(.tokenInvalid, "\(source): issued \(TokenTimes.seconds(issuedAt - now)) s in the future (iat)")
        }
        return expiresAt
    }

    /// Whole seconds for a log line; a claim of 1e308 must not trap the conversion.
    static func seconds(_ interval: Double) -> Int64 {
        interval.isFinite ? Int64(max(min(interval, 1e15), -1e15)) : 0
    }
}
