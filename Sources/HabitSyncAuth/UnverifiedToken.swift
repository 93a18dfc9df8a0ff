import Foundation

/// What can be read from a token before its signature is checked: enough to route it to a
/// tenant's keys or issuer, and nothing that is trusted until the signature verifies.
public struct UnverifiedToken: Sendable {
    public let algorithm: String
    public let keyID: String?
    /// `tid`: a token of a tenant's own keys (`tenant create`).
    public let tenantID: UUID?
    /// `iss`, when it is a usable string (1–512 characters, no control character).
    public let issuer: String?
    /// `aud`, a string or an array of strings.
    public let audiences: [String]
    /// Every top-level claim whose value is a string (the user claim is one of them).
    public let stringClaims: [String: String]
    public let expiresAt: Double?
    public let notBefore: Double?
    public let issuedAt: Double?

    public init(_ token: String) throws(AuthenticationFailure) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty else { throw AuthenticationFailure(.unauthorized, "not a three-part JWT") }
        guard let header = Self.claims(parts[0]), let payload = Self.claims(parts[1]) else {
            throw AuthenticationFailure(.unauthorized, "header or payload is not base64url JSON")
        }
        guard case .string(let algorithm) = header["alg"] else { throw AuthenticationFailure(.unauthorized, "no alg") }
        self.algorithm = algorithm
        if case .string(let kid) = header["kid"] { self.keyID = kid } else { self.keyID = nil }
        // A tid that is not a UUID string is some provider's own claim: it names none of ours.
        if case .string(let tid) = payload["tid"] { self.tenantID = UUID(uuidString: tid) } else { self.tenantID = nil }
        if case .string(let iss) = payload["iss"], IssuerRules.problem(issuer: iss) == nil { self.issuer = iss } else { self.issuer = nil }
        switch payload["aud"] {
        case .string(let single): self.audiences = [single]
        case .array(let many): self.audiences = many.compactMap { if case .string(let value) = $0 { value } else { nil } }
        default: self.audiences = []
        }
        self.stringClaims = payload.compactMapValues { if case .string(let value) = $0 { value } else { nil } }
        self.expiresAt = payload["exp"]?.numericDate
        self.notBefore = payload["nbf"]?.numericDate
        self.issuedAt = payload["iat"]?.numericDate
    }

    /// A base64url JSON object, or nil.
    static func claims(_ part: Substring) -> [String: ClaimValue]? {
        var base64 = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64) else { return nil }
        return try? JSONDecoder().decode([String: ClaimValue].self, from: data)
    }
}

/// One JSON value of a token's header or payload.
public enum ClaimValue: Decodable, Sendable, Equatable {
    case string(String)
    case number(Double)
    case bool(Bool)
    case array([ClaimValue])
    case object([String: ClaimValue])
    case null

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([ClaimValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: ClaimValue].self))
        }
    }

    /// A NumericDate: a finite number (not a boolean, not a string).
    var numericDate: Double? {
        if case .number(let value) = self, value.isFinite { value } else { nil }
    }
}
