import Foundation
import HabitSyncAuth
import JWTKit
import _CryptoExtras

/// An identity provider as the tests play it: signing keys (RSA, P-256, Ed25519) with kids,
/// the JWKS it publishes, and tokens of any shape, signed by any of its keys.
struct TestProvider: Sendable {
    struct SigningKey: Sendable {
        let kid: String
        let algorithm: String
        let collection: JWTKeyCollection
        let jwk: [String: String]
    }

    /// RSA keys are slow to make (seconds of CPU on a busy machine, taken from the tests
    /// running beside): two are made once, and every test draws from them.
    static let rsaKeys = Task { () throws -> [JWTKit.Insecure.RSA.PrivateKey] in
        try (0..<2).map { _ in try JWTKit.Insecure.RSA.PrivateKey(backing: _RSA.Signing.PrivateKey(keySize: .bits2048)) }
    }

    /// An RSA signing key under `kid`: the first of the shared keys, or the second (`other`).
    static func rsa(kid: String, other: Bool = false) async throws -> SigningKey {
        let key = try await rsaKeys.value[other ? 1 : 0]
        let (modulus, exponent) = try key.publicKey.getKeyPrimitives()
        let collection = await JWTKeyCollection().add(rsa: key, digestAlgorithm: .sha256, kid: JWKIdentifier(string: kid))
        return SigningKey(
            kid: kid, algorithm: "RS256", collection: collection,
            jwk: ["kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256", "n": modulus.base64URL, "e": exponent.base64URL])
    }

    static func ec(kid: String) async throws -> SigningKey {
        let key = ES256PrivateKey()
        guard let (x, y) = key.publicKey.parameters else { throw KeyMaterialError("no parameters") }
        let collection = await JWTKeyCollection().add(ecdsa: key, kid: JWKIdentifier(string: kid))
        return SigningKey(kid: kid, algorithm: "ES256", collection: collection, jwk: ["kty": "EC", "crv": "P-256", "kid": kid, "x": x, "y": y])
    }

    static func ed25519(kid: String) async throws -> SigningKey {
        let key = try EdDSA.PrivateKey(curve: .ed25519)
        let collection = await JWTKeyCollection().add(eddsa: key, kid: JWKIdentifier(string: kid))
        return SigningKey(
            kid: kid, algorithm: "EdDSA", collection: collection,
            jwk: ["kty": "OKP", "crv": "Ed25519", "kid": kid, "x": key.publicKey.rawRepresentation.base64URL])
    }

    static func jwks(_ keys: [SigningKey]) -> String {
        let object: [String: Any] = ["keys": keys.map(\.jwk)]
        return String(decoding: (try? JSONSerialization.data(withJSONObject: object)) ?? Data(), as: UTF8.self)
    }

    /// A token with exactly these claims, signed by `key` with `kid` in the header (the key's
    /// own unless another is given; nil: none).
    static func token(_ claims: [String: TestClaim], key: SigningKey, kid: String?? = .none) async throws -> String {
        var header = JWTHeader()
        switch kid {
        case .none: header.kid = key.kid
        case .some(let chosen): header.kid = chosen
        }
        return try await key.collection.sign(TestClaims(values: claims), kid: nil, header: header)
    }

    /// Claims an ID token of `issuer` for `audience` and `user` carries, valid now for an hour.
    static func claims(issuer: String, audience: String, user: String, now: Date = Date(), lifetime: TimeInterval = 3600) -> [String: TestClaim] {
        [
            "iss": .string(issuer), "aud": .string(audience), "sub": .string(user),
            "iat": .number(now.timeIntervalSince1970), "exp": .number(now.timeIntervalSince1970 + lifetime),
        ]
    }

    /// Base64url of a JSON header and payload and a made-up signature: a token no key signed.
    static func unsigned(header: [String: Any], claims: [String: Any]) -> String {
        func part(_ object: [String: Any]) -> String {
            ((try? JSONSerialization.data(withJSONObject: object)) ?? Data()).base64URL
        }
        return "\(part(header)).\(part(claims)).\(Data("sig".utf8).base64URL)"
    }
}

enum TestClaim: Encodable, Sendable {
    case string(String)
    case number(Double)
    case strings([String])
    case object([String: String])

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .strings(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

struct TestClaims: JWTPayload {
    var values: [String: TestClaim]

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(values: [String: TestClaim]) { self.values = values }
    init(from decoder: any Decoder) throws { values = [:] }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        for (name, value) in values { try container.encode(value, forKey: Key(stringValue: name)) }
    }

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
