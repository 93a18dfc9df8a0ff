import Foundation
import JWTKit

/// Who a verified token speaks for. Every query of the request is scoped by these two.
public struct VerifiedIdentity: Sendable, Equatable {
    public let tenantID: UUID
    public let userID: String
    public let expiresAt: Date

    init(tenantID: UUID, userID: String, expiresAt: Date) {
        self.tenantID = tenantID
        self.userID = userID
        self.expiresAt = expiresAt
    }

    /// An identity established by other means than a token (admin commands, tests). Never
    /// build one from request input.
    public static func trusted(tenantID: UUID, userID: String) -> VerifiedIdentity {
        VerifiedIdentity(tenantID: tenantID, userID: userID, expiresAt: .distantFuture)
    }
}

/// Verifies an access token against the keys of the tenant it names, and only those.
public enum AccessTokenVerifier {
    /// Clock skew tolerated on `exp` and `nbf`.
    public static let leeway: TimeInterval = 60

    /// - Parameters:
    ///   - keys: the active keys of `token.tenantID`'s tenant (none when it does not exist:
    ///     the caller refuses with `unknown_issuer` before).
    public static func verify(_ token: String, unverified: UnverifiedToken, keys: [TenantKey], now: Date = Date()) async throws(AuthenticationFailure) -> VerifiedIdentity {
        guard let tenantID = unverified.tenantID else { throw AuthenticationFailure(.unknownIssuer, "no tid UUID claim and no configured iss") }
        guard let algorithm = TokenAlgorithm(rawValue: unverified.algorithm) else {
            throw AuthenticationFailure(.algorithmNotAllowed, "tid \(tenantID): algorithm \(String(reflecting: String(unverified.algorithm.prefix(32)))) is not accepted")
        }
        // The header's algorithm must be the key's own: no HS256 token checked against an
        // RSA public key's bytes, whatever the library would do.
        var candidates = keys.filter { $0.algorithm == algorithm }
        if let keyID = unverified.keyID, let exact = candidates.first(where: { $0.id.uuidString.lowercased() == keyID.lowercased() }) {
            candidates = [exact]
        }
        guard !candidates.isEmpty else {
            throw AuthenticationFailure(.algorithmNotAllowed, "tid \(tenantID): no \(algorithm.rawValue) key; its keys are \(Set(keys.map(\.algorithm.rawValue)).sorted())")
        }
        var claims: AccessTokenClaims?
        for key in candidates {
            do {
                claims = try await key.keyCollection().verify(token, as: AccessTokenClaims.self)
                break
            } catch {
                continue
            }
        }
        guard let claims else {
            throw AuthenticationFailure(
                .signatureInvalid,
                "tid \(tenantID): kid \(String(reflecting: String((unverified.keyID ?? "-").prefix(100)))) does not verify; active key ids \(keys.map { $0.id.uuidString.lowercased() })")
        }
        guard UUID(uuidString: claims.tid) == tenantID else { throw AuthenticationFailure(.tokenInvalid, "tid changed") }
        _ = try TokenTimes.check(unverified, now: now, source: "tid \(tenantID)")
        let subject = claims.sub.value
        if let problem = SubjectRules.problem(subject) { throw AuthenticationFailure(.tokenInvalid, "sub \(problem)") }
        return VerifiedIdentity(tenantID: tenantID, userID: subject, expiresAt: claims.exp.value)
    }
}
