import Foundation
import HabitSyncAuth
import Testing

/// An issuer's audiences are compared as bytes, as the database stores them: a token naming
/// "café" decomposed is not for an app registered as "café" composed (Swift's `==` calls the
/// two equal), and two configurations with such audiences do not overlap (issue 44).
@Suite struct LookAlikeIssuerTests {
    static let composed = "caf\u{E9}-app"
    static let decomposed = "cafe\u{301}-app"

    static func token(audience: String) throws -> UnverifiedToken {
        func part(_ object: [String: Any]) throws -> String {
            try JSONSerialization.data(withJSONObject: object).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        return try UnverifiedToken(
            "\(try part(["alg": "ES256"])).\(try part(["iss": "https://login.example.com", "aud": audience, "sub": "ada"])).c2ln")
    }

    @Test func audiencesAreComparedAsBytes() throws {
        let configuration = try IssuerConfiguration(issuer: "https://login.example.com", keySource: .discovery, audiences: [Self.composed])
        #expect(configuration.acceptsAudience(of: try Self.token(audience: Self.composed)))
        #expect(!configuration.acceptsAudience(of: try Self.token(audience: Self.decomposed)))
        let other = try IssuerConfiguration(issuer: "https://login.example.com", keySource: .discovery, audiences: [Self.decomposed])
        #expect(!configuration.overlaps(other), "two apps, two audiences")
        let same = try IssuerConfiguration(issuer: "https://login.example.com", keySource: .discovery, audiences: [Self.composed, "x"])
        #expect(configuration.overlaps(same))
    }
}
