import Foundation

/// What can be read from a token before its signature is checked: enough to find the tenant's
/// keys, and nothing that is trusted.
public struct UnverifiedToken: Sendable {
    public let algorithm: String
    public let keyID: String?
    public let tenantID: UUID

    public init(_ token: String) throws(AuthenticationFailure) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty else { throw AuthenticationFailure("not a three-part JWT") }
        guard let header = Self.jsonObject(parts[0]), let payload = Self.jsonObject(parts[1]) else {
            throw AuthenticationFailure("header or payload is not base64url JSON")
        }
        guard let algorithm = header["alg"] as? String else { throw AuthenticationFailure("no alg") }
        guard let tid = payload["tid"] as? String, let tenantID = UUID(uuidString: tid) else { throw AuthenticationFailure("no tid UUID claim") }
        self.algorithm = algorithm
        self.keyID = header["kid"] as? String
        self.tenantID = tenantID
    }

    static func jsonObject(_ part: Substring) -> [String: Any]? {
        var base64 = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64) else { return nil }
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
    }
}

/// Why a token was refused. For logs only: clients always get the same bare 401.
public struct AuthenticationFailure: Error, Sendable, CustomStringConvertible, Equatable {
    public let reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}
