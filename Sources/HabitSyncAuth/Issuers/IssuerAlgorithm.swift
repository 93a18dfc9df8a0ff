/// Signature algorithms an identity provider's tokens may use. Asymmetric only: a provider's
/// keys are public, so a symmetric algorithm against them would let anyone sign. `none` is
/// never one of them.
public enum IssuerAlgorithm: String, Sendable, CaseIterable, Codable {
    case rs256 = "RS256"
    case es256 = "ES256"
    case eddsa = "EdDSA"

    /// The JWK key type (`kty`) and curve a key must have to verify this algorithm.
    var keyShape: (keyType: String, curve: String?) {
        switch self {
        case .rs256: ("RSA", nil)
        case .es256: ("EC", "P-256")
        case .eddsa: ("OKP", "Ed25519")
        }
    }
}
