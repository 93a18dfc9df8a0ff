import Foundation
import JWTKit

/// One JWT verification key of a tenant: an HS256 shared secret, or an ES256/RS256 public key.
public struct TenantKey: Sendable, Equatable {
    public enum Material: Sendable, Equatable {
        case sharedSecret([UInt8])
        case publicKeyPEM(String)
    }

    public let id: UUID
    public let algorithm: TokenAlgorithm
    public let material: Material

    public static let minimumSecretBytes = 32

    /// Checks the material fits the algorithm (a secret of at least 32 bytes; a PEM that parses
    /// as a P-256 or RSA public key) before it is stored.
    public init(id: UUID = UUID(), algorithm: TokenAlgorithm, material: Material) throws(KeyMaterialError) {
        switch (algorithm, material) {
        case (.hs256, .sharedSecret(let secret)):
            guard secret.count >= Self.minimumSecretBytes else {
                throw KeyMaterialError("an HS256 secret needs at least \(Self.minimumSecretBytes) bytes; got \(secret.count)")
            }
        case (.es256, .publicKeyPEM(let pem)):
            do { _ = try ES256PublicKey(pem: pem) } catch { throw KeyMaterialError("not a PEM P-256 (ES256) public key") }
        case (.rs256, .publicKeyPEM(let pem)):
            do {
                let key = try Insecure.RSA.PublicKey(pem: pem)
                _ = key
            } catch { throw KeyMaterialError("not a PEM RSA (RS256) public key of at least 2048 bits") }
        default:
            throw KeyMaterialError("\(algorithm.rawValue) needs \(algorithm == .hs256 ? "a shared secret" : "a public key")")
        }
        self.id = id
        self.algorithm = algorithm
        self.material = material
    }

    /// Reads a PEM public key and tells ES256 from RS256 by what it parses as.
    public static func publicKey(pem: String, id: UUID = UUID()) throws(KeyMaterialError) -> TenantKey {
        if (try? ES256PublicKey(pem: pem)) != nil { return try TenantKey(id: id, algorithm: .es256, material: .publicKeyPEM(pem)) }
        if (try? Insecure.RSA.PublicKey(pem: pem)) != nil { return try TenantKey(id: id, algorithm: .rs256, material: .publicKeyPEM(pem)) }
        throw KeyMaterialError("the file is neither a PEM P-256 (ES256) nor an RSA (RS256) public key")
    }

    /// A new random HS256 secret.
    public static func generatedSecret(id: UUID = UUID()) -> TenantKey {
        var generator = SystemRandomNumberGenerator()
        let secret = (0..<minimumSecretBytes).map { _ in UInt8.random(in: 0...255, using: &generator) }
        // 32 random bytes always satisfy the rule.
        return try! TenantKey(id: id, algorithm: .hs256, material: .sharedSecret(secret))
    }

    /// A collection holding only this key, for jwt-kit.
    func keyCollection() async throws -> JWTKeyCollection {
        let collection = JWTKeyCollection()
        switch material {
        case .sharedSecret(let secret):
            await collection.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        case .publicKeyPEM(let pem):
            switch algorithm {
            case .es256: await collection.add(ecdsa: try ES256PublicKey(pem: pem))
            case .rs256: await collection.add(rsa: try Insecure.RSA.PublicKey(pem: pem), digestAlgorithm: .sha256)
            case .hs256: break
            }
        }
        return collection
    }
}
