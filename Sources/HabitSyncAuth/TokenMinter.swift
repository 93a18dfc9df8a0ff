import Foundation
import JWTKit

/// Mints access tokens with a tenant's HS256 key, for development and tests (`token mint`).
public enum TokenMinter {
    public static func mint(tenantID: UUID, userID: String, key: TenantKey, ttl: TimeInterval, now: Date = Date()) async throws -> String {
        guard key.algorithm == .hs256 else {
            throw KeyMaterialError("token mint needs the tenant's HS256 key; \(key.algorithm.rawValue) tenants sign their own tokens")
        }
        let claims = AccessTokenClaims(
            tid: tenantID.uuidString.lowercased(), sub: SubjectClaim(value: userID),
            exp: ExpirationClaim(value: now.addingTimeInterval(ttl)), nbf: nil, iat: IssuedAtClaim(value: now))
        var header = JWTHeader()
        header.kid = key.id.uuidString.lowercased()
        return try await key.keyCollection().sign(claims, header: header)
    }
}

extension TokenMinter {
    /// Mints a token as an identity provider would: `iss`, `aud`, `sub`, `iat`, `exp`, signed
    /// with a PEM private key (P-256 for ES256, RSA for RS256). For trying an issuer
    /// configuration without the provider (`token mint --signing-key`, docs/identity.md).
    public static func mintAsIssuer(
        issuer: String, audience: String, userID: String, privateKeyPEM: String, keyID: String?,
        ttl: TimeInterval, now: Date = Date()
    ) async throws -> String {
        let collection = JWTKeyCollection()
        if let key = try? ES256PrivateKey(pem: privateKeyPEM) {
            await collection.add(ecdsa: key)
        } else if let key = try? Insecure.RSA.PrivateKey(pem: privateKeyPEM) {
            await collection.add(rsa: key, digestAlgorithm: .sha256)
        } else {
            throw KeyMaterialError("the signing key is neither a PEM P-256 (ES256) nor an RSA (RS256) private key")
        }
        let claims = IssuerTokenClaims(
            iss: IssuerClaim(value: issuer), aud: AudienceClaim(value: audience), sub: SubjectClaim(value: userID),
            iat: IssuedAtClaim(value: now), exp: ExpirationClaim(value: now.addingTimeInterval(ttl)))
        var header = JWTHeader()
        if let keyID { header.kid = keyID }
        return try await collection.sign(claims, header: header)
    }
}

/// What an identity provider's ID token carries, at the least.
struct IssuerTokenClaims: JWTPayload {
    var iss: IssuerClaim
    var aud: AudienceClaim
    var sub: SubjectClaim
    var iat: IssuedAtClaim
    var exp: ExpirationClaim

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
