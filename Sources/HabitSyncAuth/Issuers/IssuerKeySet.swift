import Foundation
import JWTKit

/// One public key of an identity provider, ready to verify signatures.
public struct IssuerKey: Sendable {
    public let keyID: String?
    /// `kty` (`RSA`, `EC`, `OKP`) and `crv`, which decide the algorithms it can verify.
    let keyType: String
    let curve: String?
    /// The JWK's own `alg`, when it names one: a token must then use exactly that.
    let declaredAlgorithm: String?
    /// Holds this key alone, so a token is verified by the key its checks chose and no other.
    let collection: JWTKeyCollection

    /// Whether a token signed with `algorithm` may be verified with this key.
    func fits(_ algorithm: IssuerAlgorithm) -> Bool {
        let shape = algorithm.keyShape
        return keyType == shape.keyType && (shape.curve == nil || curve == shape.curve)
            && (declaredAlgorithm == nil || declaredAlgorithm == algorithm.rawValue)
    }
}

/// A provider's public keys: a JWKS document (RFC 7517), or one PEM public key.
public struct IssuerKeySet: Sendable {
    public let keys: [IssuerKey]
    /// How many entries of the document could not be used (another key type, an encryption
    /// key, a malformed one): for the log when a `kid` is unknown.
    public let skipped: Int

    public static let maximumKeys = 100

    public var keyIDs: [String] { keys.compactMap(\.keyID) }

    public func key(id: String) -> IssuerKey? { keys.first { $0.keyID == id } }

    /// Reads a JWKS document or a PEM public key. Keys it cannot use are skipped; a document
    /// with no usable key at all is an error.
    public static func parse(_ bytes: [UInt8]) async throws(KeyMaterialError) -> IssuerKeySet {
        let text = String(decoding: bytes, as: UTF8.self)
        if text.contains("-----BEGIN") { return try await parsePEM(text) }
        guard let document = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
            let entries = document["keys"] as? [Any]
        else { throw KeyMaterialError("not a JWKS document (an object with a keys array)") }
        guard entries.count <= maximumKeys else { throw KeyMaterialError("more than \(maximumKeys) keys") }
        var keys: [IssuerKey] = []
        var skipped = 0
        for case let entry as [String: Any] in entries {
            guard let key = await usableKey(entry) else { skipped += 1; continue }
            keys.append(key)
        }
        skipped += entries.count - entries.filter { $0 is [String: Any] }.count
        guard !keys.isEmpty else { throw KeyMaterialError("no usable signing key (RSA, EC P-256 or Ed25519) among \(entries.count)") }
        return IssuerKeySet(keys: keys, skipped: skipped)
    }

    private static func usableKey(_ entry: [String: Any]) async -> IssuerKey? {
        guard let keyType = entry["kty"] as? String, ["RSA", "EC", "OKP"].contains(keyType) else { return nil }
        if let use = entry["use"] as? String, use != "sig" { return nil }
        let curve = entry["crv"] as? String
        if keyType == "EC", curve != "P-256" { return nil }
        if keyType == "OKP", curve != "Ed25519" { return nil }
        let declared = entry["alg"] as? String
        if let declared, IssuerAlgorithm(rawValue: declared) == nil { return nil }
        let keyID = entry["kid"] as? String
        // jwt-kit files a JWK under its kid; a key without one gets a placeholder here, and
        // is chosen by the checks before jwt-kit sees the token.
        var publicPart = entry.filter { ["kty", "crv", "x", "y", "n", "e", "alg"].contains($0.key) }
        publicPart["kid"] = keyID ?? "-"
        guard let json = try? JSONSerialization.data(withJSONObject: publicPart), let jwk = try? JWK(json: String(decoding: json, as: UTF8.self)) else { return nil }
        let collection = JWTKeyCollection()
        guard (try? await collection.add(jwk: jwk)) != nil else { return nil }
        // A key that cannot make a verifier for the algorithms it fits is not usable.
        let algorithm = declared ?? (keyType == "RSA" ? "RS256" : keyType == "EC" ? "ES256" : "EdDSA")
        guard (try? await collection.getKey(for: JWKIdentifier(string: keyID ?? "-"), alg: algorithm)) != nil else { return nil }
        return IssuerKey(keyID: keyID, keyType: keyType, curve: curve, declaredAlgorithm: declared, collection: collection)
    }

    private static func parsePEM(_ pem: String) async throws(KeyMaterialError) -> IssuerKeySet {
        let collection = JWTKeyCollection()
        if let key = try? ES256PublicKey(pem: pem) {
            await collection.add(ecdsa: key)
            return IssuerKeySet(keys: [IssuerKey(keyID: nil, keyType: "EC", curve: "P-256", declaredAlgorithm: nil, collection: collection)], skipped: 0)
        }
        if let key = try? Insecure.RSA.PublicKey(pem: pem) {
            await collection.add(rsa: key, digestAlgorithm: .sha256)
            return IssuerKeySet(keys: [IssuerKey(keyID: nil, keyType: "RSA", curve: nil, declaredAlgorithm: nil, collection: collection)], skipped: 0)
        }
        throw KeyMaterialError("the PEM is neither a P-256 (ES256) nor an RSA (RS256) public key of at least 2048 bits")
    }
}
