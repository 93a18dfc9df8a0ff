import Crypto
import Foundation
import Synchronization

/// The provider authentication token APNs wants on every request: an ES256 JWT with the key's
/// id (`kid`), the team (`iss`) and when it was made (`iat`), signed with the tenant's .p8 key.
/// Apple refuses one older than an hour and throttles one made more often than every 20
/// minutes, so each key's token is kept and made again once `lifetime` old.
public final class APNsProviderTokens: Sendable {
    public let lifetime: Duration
    private let tokens = Mutex<[String: (token: String, madeAt: Date)]>([:])

    public init(lifetime: Duration = .seconds(40 * 60)) { self.lifetime = lifetime }

    public struct KeyUnreadable: Error, CustomStringConvertible {
        public var description: String { "the tenant's APNs key is not a P-256 private key in PKCS#8 PEM" }
    }

    /// The token for this key now: the kept one, or a new one.
    public func token(keyID: String, teamID: String, signingKey: String, now: Date = Date()) throws -> String {
        let name = teamID + "." + keyID
        if let kept = tokens.withLock({ $0[name] }), now.timeIntervalSince(kept.madeAt) < lifetime / .seconds(1), kept.madeAt <= now {
            return kept.token
        }
        let token = try Self.make(keyID: keyID, teamID: teamID, signingKey: signingKey, issuedAt: now)
        tokens.withLock { $0[name] = (token, now) }
        return token
    }

    /// APNs refused the token (403 `ExpiredProviderToken`, `InvalidProviderToken`): the next
    /// request makes another.
    public func forget(keyID: String, teamID: String) {
        _ = tokens.withLock { $0.removeValue(forKey: teamID + "." + keyID) }
    }

    static func make(keyID: String, teamID: String, signingKey: String, issuedAt: Date) throws -> String {
        guard let key = try? P256.Signing.PrivateKey(pemRepresentation: signingKey) else { throw KeyUnreadable() }
        let header = #"{"alg":"ES256","kid":"\#(keyID)"}"#
        let claims = #"{"iss":"\#(teamID)","iat":\#(Int64(issuedAt.timeIntervalSince1970))}"#
        let signingInput = base64URL(Data(header.utf8)) + "." + base64URL(Data(claims.utf8))
        let signature = try key.signature(for: Data(signingInput.utf8))
        return signingInput + "." + base64URL(signature.rawRepresentation)
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
