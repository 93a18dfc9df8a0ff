import Foundation
import HabitSyncAuth

/// An OpenID Provider's configuration (`/.well-known/openid-configuration`): only `issuer`,
/// which must be the configured one (OpenID Connect Discovery 1.0, section 4.3), and
/// `jwks_uri` are read.
enum DiscoveryDocument {
    static func jwksURL(_ bytes: [UInt8], issuer: String) throws(KeyFetchFailure) -> String {
        guard let document = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else {
            throw KeyFetchFailure("the discovery document is not a JSON object")
        }
        guard let named = document["issuer"] as? String, named == issuer else {
            throw KeyFetchFailure("the discovery document names issuer \(String(describing: document["issuer"]).prefix(200)), not \(issuer)")
        }
        guard let url = document["jwks_uri"] as? String, IssuerRules.problem(jwksURL: url) == nil else {
            throw KeyFetchFailure("the discovery document has no usable jwks_uri")
        }
        return url
    }
}
