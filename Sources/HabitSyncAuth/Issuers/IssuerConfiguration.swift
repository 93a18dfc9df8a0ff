import Foundation

/// One identity provider whose tokens a tenant accepts (`tenant add-issuer`, docs/identity.md).
public struct IssuerConfiguration: Sendable, Equatable {
    /// Where the provider's public keys come from.
    public enum KeySource: Sendable, Equatable {
        /// A JWKS document, fetched and kept fresh.
        case jwksURL(String)
        /// The `jwks_uri` of `<issuer>/.well-known/openid-configuration`.
        case discovery
        /// A JWKS document or a PEM public key, stored with the configuration.
        case inline(String)
    }

    /// The claims a token's audience may be read from.
    public enum AudienceClaim: String, Sendable, CaseIterable {
        case aud
        /// Cognito's access tokens carry the app client here and have no `aud`.
        case clientID = "client_id"
    }

    public let issuer: String
    public let keySource: KeySource
    /// A token must name one of these; empty (Cognito only): any app client of the user pool.
    public let audiences: [String]
    public let audienceClaims: [AudienceClaim]
    public let algorithms: [IssuerAlgorithm]
    /// The claim whose value is the user id (`sub` by default).
    public let userClaim: String
    /// Longest accepted lifetime, `exp − iat`, in seconds.
    public let maximumLifetime: Int
    public let preset: IssuerPreset?

    public static let defaultMaximumLifetime = 86_400

    public init(
        issuer: String, keySource: KeySource, audiences: [String], audienceClaims: [AudienceClaim] = [.aud],
        algorithms: [IssuerAlgorithm] = [.rs256, .es256], userClaim: String = "sub",
        maximumLifetime: Int = defaultMaximumLifetime, preset: IssuerPreset? = nil
    ) throws(IssuerConfigurationError) {
        if let problem = IssuerRules.problem(issuer: issuer) { throw IssuerConfigurationError("--issuer \(problem)") }
        switch keySource {
        case .jwksURL(let url):
            if let problem = IssuerRules.problem(jwksURL: url) { throw IssuerConfigurationError("--jwks-url \(problem)") }
        case .discovery:
            break
        case .inline(let text):
            guard (1...IssuerRules.maximumInlineKeysBytes).contains(text.utf8.count) else {
                throw IssuerConfigurationError("--jwks-file must be 1–\(IssuerRules.maximumInlineKeysBytes) bytes")
            }
        }
        if let problem = IssuerRules.problem(audiences: audiences) { throw IssuerConfigurationError("--audience: \(problem)") }
        guard !audiences.isEmpty || preset == .cognito else { throw IssuerConfigurationError("give at least one --audience") }
        guard (1...2).contains(audienceClaims.count), Set(audienceClaims).count == audienceClaims.count else {
            throw IssuerConfigurationError("audience claims must be aud, client_id or both")
        }
        guard !algorithms.isEmpty, Set(algorithms).count == algorithms.count else { throw IssuerConfigurationError("give each --algorithm once") }
        if let problem = IssuerRules.problem(userClaim: userClaim) { throw IssuerConfigurationError("--user-claim \(problem)") }
        guard IssuerRules.lifetimeRange.contains(maximumLifetime) else { throw IssuerConfigurationError("--max-lifetime must be 1m–30d") }
        self.issuer = issuer
        self.keySource = keySource
        self.audiences = audiences
        self.audienceClaims = audienceClaims
        self.algorithms = algorithms
        self.userClaim = userClaim
        self.maximumLifetime = maximumLifetime
        self.preset = preset
    }

    /// The OIDC discovery document's URL (OpenID Connect Discovery 1.0, section 4).
    public var discoveryURL: String {
        (issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer) + "/.well-known/openid-configuration"
    }

    /// Whether the token names one of the accepted audiences in one of the audience claims,
    /// compared as bytes (as the database stores them: "café" composed and decomposed are two
    /// audiences, though Swift's `==` calls them one).
    public func acceptsAudience(of token: UnverifiedToken) -> Bool {
        if audiences.isEmpty { return true }
        var named: [String] = []
        for claim in audienceClaims {
            switch claim {
            case .aud: named += token.audiences
            case .clientID: if let clientID = token.stringClaims["client_id"] { named.append(clientID) }
            }
        }
        return named.contains { name in audiences.contains { $0.utf8.elementsEqual(name.utf8) } }
    }

    /// Whether this configuration and `other` would both accept some token (same issuer, and
    /// an audience in common or either accepting any).
    public func overlaps(_ other: IssuerConfiguration) -> Bool {
        issuer.utf8.elementsEqual(other.issuer.utf8)
            && (audiences.isEmpty || other.audiences.isEmpty || audiences.contains { mine in other.audiences.contains { $0.utf8.elementsEqual(mine.utf8) } })
    }
}

/// Why an issuer configuration was refused: a message naming the option.
public struct IssuerConfigurationError: Error, Sendable, CustomStringConvertible, Equatable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
