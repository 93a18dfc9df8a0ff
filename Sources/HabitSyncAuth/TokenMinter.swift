import Foundation
import JWTKit

/// Mints access tokens with a tenant's HS256 key, for development and tests (`token mint`).
public enum TokenMinter {
    public static func mint(tenantID: UUID, userID: String, key: TenantKey, ttl: TimeInterval, now: Date = Date()) async throws -> String {
        guard key.algorithm == .hs256 else {
            throw TenantKeyError("token mint needs the tenant's HS256 key; \(key.algorithm.rawValue) tenants sign their own tokens")
        }
        let claims = AccessTokenClaims(
            tid: tenantID.uuidString.lowercased(), sub: SubjectClaim(value: userID),
            exp: ExpirationClaim(value: now.addingTimeInterval(ttl)), nbf: nil, iat: IssuedAtClaim(value: now))
        var header = JWTHeader()
        header.kid = key.id.uuidString.lowercased()
        return try await key.keyCollection().sign(claims, header: header)
    }
}
