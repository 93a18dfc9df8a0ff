import Foundation
import JWTKit

/// The claims habitsync reads: the tenant (`tid`), the user (`sub`), and the validity window.
struct AccessTokenClaims: JWTPayload {
    var tid: String
    var sub: SubjectClaim
    var exp: ExpirationClaim
    var nbf: NotBeforeClaim?
    var iat: IssuedAtClaim?

    /// Times are checked by `AccessTokenVerifier` with its leeway and clock, not here.
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
