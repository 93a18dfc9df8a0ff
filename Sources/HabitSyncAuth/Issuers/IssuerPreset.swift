import Foundation

/// Identity providers whose issuer, audience and key URL follow from one or two identifiers
/// (docs/identity.md gives each step by step).
public enum IssuerPreset: String, Sendable, CaseIterable {
    case firebase, apple, auth0, supabase, cognito

    /// What a preset is built from; each field belongs to one preset.
    public struct Inputs: Sendable, Equatable {
        public var project: String?
        public var bundleIDs: [String] = []
        public var domain: String?
        public var projectURL: String?
        public var region: String?
        public var userPool: String?
        public var audiences: [String] = []
        public init() {}
    }

    /// The configuration this preset makes of `inputs`, with the key source replaced by
    /// `jwksURL` when one is given (a mirror, or a test's key server).
    public func configuration(
        _ inputs: Inputs, jwksURL: String? = nil, algorithms: [IssuerAlgorithm]? = nil,
        userClaim: String? = nil, maximumLifetime: Int? = nil
    ) throws(IssuerConfigurationError) -> IssuerConfiguration {
        let issuer: String, keysURL: String, audiences: [String], defaultAlgorithms: [IssuerAlgorithm]
        var audienceClaims: [IssuerConfiguration.AudienceClaim] = [.aud]
        switch self {
        case .firebase:
            let project = try Self.required(inputs.project, "--project", pattern: "^[a-z][a-z0-9-]{3,61}[a-z0-9]$", rule: "a Firebase project id (lowercase letters, digits, -)")
            issuer = "https://securetoken.google.com/\(project)"
            keysURL = "https://www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com"
            audiences = [project]
            defaultAlgorithms = [.rs256]
        case .apple:
            guard !inputs.bundleIDs.isEmpty else { throw IssuerConfigurationError("--preset apple needs --bundle-id") }
            for bundleID in inputs.bundleIDs {
                _ = try Self.required(bundleID, "--bundle-id", pattern: "^[A-Za-z0-9][A-Za-z0-9.-]{0,154}$", rule: "an app's bundle id or a Services ID (letters, digits, . and -)")
            }
            issuer = "https://appleid.apple.com"
            keysURL = "https://appleid.apple.com/auth/keys"
            audiences = inputs.bundleIDs
            defaultAlgorithms = [.rs256]
        case .auth0:
            let domain = try Self.required(
                inputs.domain, "--domain", pattern: "^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)+$",
                rule: "a host name such as example.eu.auth0.com, without https://")
            guard !inputs.audiences.isEmpty else { throw IssuerConfigurationError("--preset auth0 needs --audience (the API identifier)") }
            issuer = "https://\(domain)/"
            keysURL = "https://\(domain)/.well-known/jwks.json"
            audiences = inputs.audiences
            defaultAlgorithms = [.rs256]
        case .supabase:
            var url = try Self.required(inputs.projectURL, "--project-url", pattern: "^https://[A-Za-z0-9.-]+(:[0-9]{1,5})?/?$", rule: "the project's URL, such as https://abcd.supabase.co")
            if url.hasSuffix("/") { url.removeLast() }
            issuer = "\(url)/auth/v1"
            keysURL = "\(url)/auth/v1/.well-known/jwks.json"
            audiences = inputs.audiences.isEmpty ? ["authenticated"] : inputs.audiences
            defaultAlgorithms = [.es256, .rs256]
        case .cognito:
            let region = try Self.required(inputs.region, "--region", pattern: "^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}$", rule: "an AWS region such as eu-west-1")
            let pool = try Self.required(inputs.userPool, "--user-pool", pattern: "^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}_[A-Za-z0-9]{1,40}$", rule: "a user pool id such as eu-west-1_AbCdEf123")
            guard pool.hasPrefix(region + "_") else { throw IssuerConfigurationError("--user-pool \(pool) is not in --region \(region)") }
            issuer = "https://cognito-idp.\(region).amazonaws.com/\(pool)"
            keysURL = "\(issuer)/.well-known/jwks.json"
            audiences = inputs.audiences
            audienceClaims = [.aud, .clientID]
            defaultAlgorithms = [.rs256]
        }
        try checkOnlyOwnInputs(inputs)
        return try IssuerConfiguration(
            issuer: issuer, keySource: .jwksURL(jwksURL ?? keysURL), audiences: audiences, audienceClaims: audienceClaims,
            algorithms: algorithms ?? defaultAlgorithms, userClaim: userClaim ?? "sub",
            maximumLifetime: maximumLifetime ?? IssuerConfiguration.defaultMaximumLifetime, preset: self)
    }

    /// An option of another preset is a mistake worth naming, not something to ignore.
    private func checkOnlyOwnInputs(_ inputs: Inputs) throws(IssuerConfigurationError) {
        let given: [(String, Bool, [IssuerPreset])] = [
            ("--project", inputs.project != nil, [.firebase]),
            ("--bundle-id", !inputs.bundleIDs.isEmpty, [.apple]),
            ("--domain", inputs.domain != nil, [.auth0]),
            ("--project-url", inputs.projectURL != nil, [.supabase]),
            ("--region", inputs.region != nil, [.cognito]),
            ("--user-pool", inputs.userPool != nil, [.cognito]),
            ("--audience", !inputs.audiences.isEmpty, [.auth0, .supabase, .cognito]),
        ]
        for (option, present, presets) in given where present && !presets.contains(self) {
            throw IssuerConfigurationError("\(option) does not apply to --preset \(rawValue)")
        }
    }

    private static func required(_ value: String?, _ option: String, pattern: String, rule: String) throws(IssuerConfigurationError) -> String {
        guard let value else { throw IssuerConfigurationError("this preset needs \(option)") }
        // ICU's $ also matches before a final newline; no space or control passes at all.
        guard !value.unicodeScalars.contains(where: IssuerRules.isSpaceOrControl) else {
            throw IssuerConfigurationError("\(option) must not contain spaces or control characters")
        }
        guard value.range(of: pattern, options: .regularExpression) != nil else { throw IssuerConfigurationError("\(option) '\(value.prefix(80))' must be \(rule)") }
        return value
    }
}
