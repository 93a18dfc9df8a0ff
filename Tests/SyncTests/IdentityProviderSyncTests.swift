import Foundation
import HabitSyncAuth
import HabitSyncClient
import HabitSyncDomain
import HabitSyncStore
import JWTKit
import ServerHarness
import SyncTestSupport
import TestSupport
import Testing

/// An app on the device SDK syncing with its identity provider's own token, beside a device
/// of the same user on a tenant-key token: one user, whichever way the token came.
@Suite struct IdentityProviderSyncTests {
    @Test func aProvidersTokenSyncsAsTheSameUserAndAnExpiredOneSaysSo() async throws {
        let world = try await SyncWorld.make()
        // The provider: a P-256 key whose public half the tenant stores inline (no fetch).
        let key = ES256PrivateKey()
        let (x, y) = try #require(key.publicKey.parameters)
        let jwks = #"{"keys":[{"kty":"EC","crv":"P-256","kid":"k1","use":"sig","x":"\#(x)","y":"\#(y)"}]}"#
        try await world.database.withPool(size: 1) { pool in
            try await IssuerStore(pool: pool).add(
                tenantID: world.tenant,
                try IssuerConfiguration(
                    issuer: "https://login.example.com", keySource: .inline(jwks), audiences: ["habits-ios"], algorithms: [.es256]))
        }
        func providerToken(issuedAt: Date) async throws -> String {
            try await TokenMinter.mintAsIssuer(
                issuer: "https://login.example.com", audience: "habits-ios", userID: "ada",
                privateKeyPEM: key.pemRepresentation, keyID: "k1", ttl: 3600, now: issuedAt)
        }
        try await world.serve { server in
            let base = try #require(URL(string: server.baseURL + "/"))
            let fresh = try await providerToken(issuedAt: Date())
            let phone = SyncEngine(store: try LocalStore(path: nil, deviceID: "phone"), baseURL: base, transport: URLSessionTransport.patient()) { fresh }
            let habit = UUID()
            try phone.store.save(.habits, id: habit, fields: ClientSDKTests.habit)
            let pushed = try await phone.sync()
            #expect(pushed.pushed.applied == 1)

            // The same user on a tid token of the tenant's own key sees the habit.
            let tidToken = try await world.token(user: "ada")
            let watch = SyncEngine(store: try LocalStore(path: nil, deviceID: "watch"), baseURL: base, transport: URLSessionTransport.patient()) { tidToken }
            _ = try await watch.sync()
            #expect(try watch.store.record(.habits, id: habit)?.fields?["name"] == .string("Read"))

            // Two hours later the provider's token has expired: the app is told exactly that.
            let stale = try await providerToken(issuedAt: Date().addingTimeInterval(-7200))
            let late = SyncEngine(store: try LocalStore(path: nil, deviceID: "tablet"), baseURL: base, transport: URLSessionTransport.patient()) { stale }
            await #expect(throws: SyncError.unauthorized(code: "token_expired")) { try await late.sync() }
        }
    }

    /// Keys the server cannot fetch (here: a private address, which is refused) leave the
    /// token unchecked: 503 with Retry-After, not a 401 that would send the user to sign in.
    @Test func anUnreachableProviderIsA503NotA401() async throws {
        let world = try await SyncWorld.make()
        try await world.database.withPool(size: 1) { pool in
            try await IssuerStore(pool: pool).add(
                tenantID: world.tenant,
                try IssuerConfiguration(
                    issuer: "https://login.example.com", keySource: .jwksURL("https://127.0.0.1:9/keys"), audiences: ["habits-ios"], algorithms: [.es256]))
        }
        let token = try await TokenMinter.mintAsIssuer(
            issuer: "https://login.example.com", audience: "habits-ios", userID: "ada",
            privateKeyPEM: ES256PrivateKey().pemRepresentation, keyID: "k1", ttl: 600)
        try await world.serve { server in
            let reply = try await TestHTTP.request("GET", server.baseURL + "/v1/sync/pull", headers: ["Authorization": "Bearer \(token)"])
            #expect(reply.status == 503)
            #expect(reply.header("Retry-After") == "5")
            #expect(String(decoding: reply.body, as: UTF8.self).contains("identity_provider_unavailable"))
        }
    }
}
