/// Why a token was refused. The code goes into the 401 body, so an admin can tell a clock
/// problem from a configuration one; the reason (issuer, kid, known kids) goes to the log only.
public struct AuthenticationFailure: Error, Sendable, CustomStringConvertible, Equatable {
    public enum Code: String, Sendable, CaseIterable {
        /// No token, or not a JWT at all.
        case unauthorized
        /// A JWT whose claims cannot be used: no `exp`, not yet valid, a bad user claim.
        case tokenInvalid = "token_invalid"
        case tokenExpired = "token_expired"
        /// No tenant accepts tokens of this `iss` (or names this `tid`).
        case unknownIssuer = "unknown_issuer"
        case audienceMismatch = "audience_mismatch"
        /// The issuer publishes no key with the token's `kid`, even after a refresh.
        case unknownKey = "unknown_key"
        /// `none`, an algorithm the issuer's configuration does not accept, or one that does
        /// not fit the key (`HS256` against an RSA key).
        case algorithmNotAllowed = "algorithm_not_allowed"
        case lifetimeTooLong = "lifetime_too_long"
        case signatureInvalid = "signature_invalid"
    }

    public let code: Code
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(code.rawValue): \(reason)" }
}
