/// What an issuer configuration may hold; the same rules as `tenant_issuers`' CHECK
/// constraints (migration 0027), which `IssuerRulesParityTests` compares on edge values.
public enum IssuerRules {
    public static let maximumIssuerLength = 512
    public static let maximumURLLength = 2048
    public static let maximumAudiences = 20
    public static let maximumAudienceLength = 512
    /// 1 minute … 30 days.
    public static let lifetimeRange = 60...2_592_000
    public static let maximumInlineKeysBytes = 262_144

    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// Spaces and controls as both Swift and the CHECK name them, without relying on a locale:
    /// U+0000–U+0020, U+007F–U+00A0 and Unicode's other White_Space characters.
    static func isSpaceOrControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0...0x20, 0x7F...0xA0, 0x1680, 0x2000...0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000: true
        default: false
        }
    }

    /// An `http(s)://` URL with no space or control character.
    static func urlProblem(_ text: String, maximumLength: Int) -> String? {
        let scalars = text.unicodeScalars
        guard (1...maximumLength).contains(scalars.count) else { return "must be 1–\(maximumLength) characters" }
        guard text.hasPrefix("https://") || text.hasPrefix("http://") else { return "must start with https://" }
        guard scalars.count > (text.hasPrefix("https://") ? 8 : 7) else { return "must name a host" }
        if scalars.contains(where: isSpaceOrControl) { return "must not contain spaces or control characters" }
        return nil
    }

    /// Why `issuer` (the `iss` claim a tenant accepts) is not acceptable, or nil.
    public static func problem(issuer: String) -> String? {
        urlProblem(issuer, maximumLength: maximumIssuerLength)
    }

    public static func problem(jwksURL: String) -> String? {
        urlProblem(jwksURL, maximumLength: maximumURLLength)
    }

    public static func problem(audiences: [String]) -> String? {
        guard audiences.count <= maximumAudiences else { return "at most \(maximumAudiences) audiences" }
        for audience in audiences {
            guard (1...maximumAudienceLength).contains(audience.unicodeScalars.count) else { return "each audience must be 1–\(maximumAudienceLength) characters" }
            if audience.unicodeScalars.contains(where: isControl) { return "an audience must not contain control characters" }
        }
        return nil
    }

    /// A claim name: 1–64 of letters, digits, `_ . : -`.
    public static func problem(userClaim: String) -> String? {
        let scalars = userClaim.unicodeScalars
        guard (1...64).contains(scalars.count),
            scalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "_.:-".unicodeScalars.contains($0)) })
        else { return "must be 1–64 letters, digits, _ . : or -" }
        return nil
    }
}
