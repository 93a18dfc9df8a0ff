import Crypto
import Foundation
import HabitSyncServer
import Testing

/// The APNs provider token: kept for its lifetime (Apple throttles one made more often than
/// every 20 minutes), made again after it (Apple refuses one older than an hour) or when APNs
/// refused it.
@Suite struct APNsProviderTokenTests {
    @Test func aTokenIsKeptForItsLifetimeThenMadeAgain() throws {
        let key = P256.Signing.PrivateKey().pemRepresentation
        let tokens = APNsProviderTokens(lifetime: .seconds(40 * 60))
        let start = Date(timeIntervalSince1970: 1_795_162_530)
        let first = try tokens.token(keyID: "ABC123DEFG", teamID: "TEAM123456", signingKey: key, now: start)
        #expect(try tokens.token(keyID: "ABC123DEFG", teamID: "TEAM123456", signingKey: key, now: start.addingTimeInterval(39 * 60)) == first)
        let later = try tokens.token(keyID: "ABC123DEFG", teamID: "TEAM123456", signingKey: key, now: start.addingTimeInterval(40 * 60))
        #expect(later != first)
        // Another key of the same team has a token of its own.
        #expect(try tokens.token(keyID: "ZZZ123DEFG", teamID: "TEAM123456", signingKey: key, now: start.addingTimeInterval(40 * 60)) != later)
        tokens.forget(keyID: "ABC123DEFG", teamID: "TEAM123456")
        #expect(try tokens.token(keyID: "ABC123DEFG", teamID: "TEAM123456", signingKey: key, now: start.addingTimeInterval(41 * 60)) != later)
        // A key that is not a P-256 PKCS#8 PEM is refused, naming no key material.
        #expect(throws: APNsProviderTokens.KeyUnreadable.self) {
            try tokens.token(keyID: "QQQ123DEFG", teamID: "TEAM123456", signingKey: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
        }
    }
}
