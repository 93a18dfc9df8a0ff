import Foundation
import FoundationNetworking
import HabitSyncAuth
import HabitSyncDomain
import HabitSyncServer
import HabitSyncStore
import JWTKit
import LibPQClient
import Logging
import ServerHarness
import SyncTestSupport
import Synchronization
import TestSupport
import Testing
import _CryptoExtras

/// Tenants and users never see or touch each other's records, and every bad token is the same 401.
@Suite struct SecurityTests {
    @Test func aTokenOfTenantANamingTenantBsIdsLeavesBUntouchedAndInvisible() async throws {
        let world = try await SyncWorld.make(name: "tenant-a")
        let (tenantB, keyB) = try await world.addTenant("tenant-b")
        try await world.serve { server in
            let deviceA = try await world.client(server, user: "alice")
            let deviceB = SyncClient(baseURL: server.baseURL, token: try await world.token(user: "alice", tenant: tenantB, key: keyB), device: "iphone-A")
            let shared = UUID()
            #expect(try await deviceB.push([Wire.change("habits", shared, at: Wire.at(0), record: Wire.habit(name: "B's habit"))]).status(0) == "applied")
            let bBefore = try await deviceB.state()

            // A pulls nothing of B, even with the same user id and record id.
            #expect(try await deviceA.pullAll().changes.isEmpty)
            // A's newer write to the same id creates A's own record; B's stays as it was.
            #expect(try await deviceA.push([Wire.change("habits", shared, at: Wire.at(100), record: Wire.habit(name: "A's habit"))]).status(0) == "applied")
            #expect(try await deviceA.push([Wire.change("habits", shared, at: Wire.at(200), record: nil)]).status(0) == "applied")
            let bAfter = try await deviceB.state()
            #expect(bAfter.count == bBefore.count)
            let bHabit = bAfter.values.first { $0["collection"] as? String == "habits" }
            #expect((bHabit?["record"] as? JSON)?["name"] as? String == "B's habit")
            #expect(try await world.count("habits", where: "id = '\(shared.uuidString.lowercased())'") == 2)
        }
    }

    @Test func usersOfOneTenantCannotSeeEachOther() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let alice = try await world.client(server, user: "alice")
            let bob = try await world.client(server, user: "bob")
            _ = try await alice.push([Wire.change("habits", UUID(), at: Wire.at(0), record: Wire.habit()), Wire.change("userSettings", UUID(), at: Wire.at(0), record: Wire.settings())])
            #expect(try await bob.pullAll().changes.isEmpty)
            let aliceChanges = try await alice.pullAll().changes
            var aliceOwn = 0
            for change in aliceChanges where ["habits", "userSettings"].contains(change["collection"] as? String ?? "") { aliceOwn += 1 }
            #expect(aliceOwn == 2)
            // Bob referring to Alice's habit is an unknown reference.
            let aliceHabit = try await alice.pullAll().changes.first { $0["collection"] as? String == "habits" }?["id"] as? String
            let reply = try await bob.push([Wire.change("reminders", UUID(), at: Wire.at(1), record: ["habitId": aliceHabit ?? "", "time": "08:00"])])
            #expect(reply.errorCode(0) == "unknown_reference")
        }
    }

    @Test func everyBadTokenGets401WithItsCodeAndNoDetail() async throws {
        let world = try await SyncWorld.make()
        let (_, otherKey) = try await world.addTenant("other")
        let rsaBacking = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let rsaPEM = rsaBacking.publicKey.pemRepresentation
        let rsaTenant = try await world.database.withPool(size: 1) { try await HabitSyncStoreHelpers.createTenant($0, name: "rsa", pem: rsaPEM) }
        try await world.serve { server in
            let exp = Date().addingTimeInterval(600)
            let tid = world.tenant.uuidString
            guard case .sharedSecret(let secret) = world.key.material else { return }
            let ours = await JWTKeyCollection().add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
            let valid = try await Claims.sign(["tid": tid, "sub": "alice", "exp": exp], with: ours)
            let noneHeader = Data(#"{"alg":"none"}"#.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
            // The code says which kind of problem (docs/identity.md); nothing in the body names a
            // tenant, key or claim.
            let expectedCodes = [
                "none": "unauthorized", "forged": "signature_invalid", "alg none": "algorithm_not_allowed",
                "HS256 with the RS256 public key": "algorithm_not_allowed", "expired": "token_expired", "another tenant's key": "signature_invalid",
            ]
            let tokens: [String: String?] = [
                "none": nil,
                "forged": try await Claims.sign(["tid": tid, "sub": "alice", "exp": exp], with: JWTKeyCollection().add(hmac: HMACKey(from: Array(repeating: 1, count: 32)), digestAlgorithm: .sha256)),
                "alg none": "\(noneHeader).\(valid.split(separator: ".")[1]).",
                "HS256 with the RS256 public key": try await Claims.sign(
                    ["tid": rsaTenant.uuidString, "sub": "alice", "exp": exp], with: JWTKeyCollection().add(hmac: HMACKey(from: Array(rsaPEM.utf8)), digestAlgorithm: .sha256)),
                "expired": try await Claims.sign(["tid": tid, "sub": "alice", "exp": Date().addingTimeInterval(-120)], with: ours),
                "another tenant's key": try await TokenMinter.mint(tenantID: world.tenant, userID: "alice", key: otherKey, ttl: 600),
            ]
            var bodies: Set<Data> = []
            for (name, token) in tokens {
                var headers: [String: String] = [:]
                if let token { headers["Authorization"] = "Bearer \(token)" }
                for (method, path) in [("GET", "/v1/sync/pull"), ("POST", "/v1/sync/push")] {
                    headers["Content-Type"] = "application/json"
                    headers["X-Device-Id"] = "d"
                    let reply = try await TestHTTP.request(method, server.baseURL + path, headers: headers, body: method == "POST" ? Data("{}".utf8) : nil)
                    #expect(reply.status == 401, "\(name) \(method): \(reply.status)")
                    #expect(reply.header("WWW-Authenticate") == "Bearer")
                    let error = (try? JSONSerialization.jsonObject(with: reply.body) as? [String: Any])?["error"] as? [String: Any]
                    #expect(error?["code"] as? String == expectedCodes[name], "\(name)")
                    #expect(Set(error?.keys.map { $0 } ?? []) == ["code", "message"])
                    let text = String(decoding: reply.body, as: UTF8.self)
                    for secret in [tid, rsaTenant.uuidString, "alice"] { #expect(!text.lowercased().contains(secret.lowercased()), "\(name) leaks \(secret)") }
                    bodies.insert(reply.body)
                }
            }
            #expect(bodies.count == Set(expectedCodes.values).count, "one body per code, the same for every token of that code")
            let ok = try await TestHTTP.request("GET", server.baseURL + "/v1/sync/pull", headers: ["Authorization": "Bearer \(valid)"])
            #expect(ok.status == 200)
        }
    }

    @Test func aSubjectWithANULOrControlCharacterIsRefusedLikeABadSignature() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let alice = try await world.client(server, user: "alice")
            #expect(try await alice.push([Wire.change("habits", UUID(), at: Wire.at(0), record: Wire.habit())]).status == 200)
            for subject in ["alice\u{0}x", "\u{0}", "alice\n", "\u{7F}", " alice", String(repeating: "a", count: 256)] {
                let token = try await world.token(user: subject)
                for path in ["/v1/sync/pull", "/v1/stats/habits", "/v1/stats/focus"] {
                    let reply = try await TestHTTP.request("GET", server.baseURL + path, headers: ["Authorization": "Bearer \(token)"])
                    #expect(reply.status == 401, "\(subject.debugDescription) \(path): \(reply.status) \(reply.text.prefix(200))")
                }
            }
            // What identity providers issue still works.
            for subject in ["auth0|5f3c9a", "alice@example.com", "é-ü 名前", "o'brien", "back\\slash", String(repeating: "a", count: 255)] {
                let device = SyncClient(baseURL: server.baseURL, token: try await world.token(user: subject), device: "d")
                #expect(try await device.pull().status == 200, "\(subject)")
            }
        }
    }

    @Test func withoutAUserEveryPolicyDeniesUnlessTheScopeIsTenantWide() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let alice = try await world.client(server, user: "alice")
            _ = try await alice.push([Wire.change("habits", UUID(), at: Wire.at(0), record: Wire.habit())])
        }
        try await world.database.withPool(size: 1, role: "habitsync_app") { pool in
            // SET LOCAL, as the server sets them (on Citus the only form the workers see).
            let tenant = "SET LOCAL habitsync.tenant_id = '\(world.tenant.uuidString.lowercased())'"
            let cases: [(String, Int)] = [
                ("\(tenant); SET LOCAL habitsync.user_id = ''", 0),
                (tenant, 0),
                ("\(tenant); SET LOCAL habitsync.user_id = ''; SET LOCAL habitsync.scope = 'user'", 0),
                ("\(tenant); SET LOCAL habitsync.user_id = 'bob'", 0),
                ("\(tenant); SET LOCAL habitsync.user_id = 'alice'", 1),
                ("\(tenant); SET LOCAL habitsync.scope = 'tenant'", 1),
            ]
            for (settings, expected) in cases {
                let visible = try await pool.withTransaction { connection in
                    try await connection.simpleQuery(unsafeSQL: settings)
                    return try await connection.query("SELECT count(*) AS n FROM habits").single().decode("n", as: Int.self)
                }
                #expect(visible == expected, "\(settings)")
            }
            var refused = false
            do {
                try await pool.withTransaction { try await RequestScope.set(on: $0, tenantID: world.tenant, userID: "") }
            } catch is RequestScope.EmptyUser {
                refused = true
            }
            #expect(refused)
            // The scope is written into `SET LOCAL` commands as literals: whatever a valid
            // subject holds arrives as the same setting, and nothing else runs.
            for subject in ["o'brien", "back\\slash", "\\'; SET LOCAL ROLE postgres; --", "é-ü 名前\u{301}", String(repeating: "'\\", count: 127)] {
                let seen = try await pool.withTransaction { connection in
                    try await RequestScope.set(on: connection, tenantID: world.tenant, userID: subject)
                    return try await connection.query("SELECT current_setting('habitsync.user_id') AS u, current_user::text AS r").single()
                }
                #expect(try seen.decode("u", as: String.self) == subject)
                #expect(try seen.decode("r", as: String.self) == "habitsync_app")
            }
        }
    }

    @Test func unknownTenantsAreCachedApartAndCannotEvictRealOnes() async throws {
        let world = try await SyncWorld.make()
        try await world.database.withPool(size: 1, role: "habitsync_app") { pool in
            let authenticator = Authenticator(tenants: TenantStore(pool: pool), cacheLifetime: .seconds(3600), maximumUnknownTenants: 100)
            let logger = Logger(label: "test")
            let real = try await world.token(user: "alice")
            #expect(try await authenticator.authenticate(authorization: "Bearer \(real)", logger: logger) != nil)
            let forgedKey = TenantKey.generatedSecret()
            let forged = try await TokenMinter.mint(tenantID: UUID(), userID: "mallory", key: forgedKey, ttl: 3600)
            let before = pool.roundTrips.count
            #expect(try await authenticator.authenticate(authorization: "Bearer \(forged)", logger: logger) == nil)
            let afterFirst = pool.roundTrips.count
            #expect(afterFirst > before, "the first sight of an unknown tenant reads the database")
            for _ in 0..<5 { #expect(try await authenticator.authenticate(authorization: "Bearer \(forged)", logger: logger) == nil) }
            #expect(pool.roundTrips.count == afterFirst, "an unknown tenant seen again costs nothing")
            // A flood of distinct forged tenants fills only the bounded unknown cache.
            for _ in 0..<250 {
                let token = try await TokenMinter.mint(tenantID: UUID(), userID: "mallory", key: forgedKey, ttl: 3600)
                _ = try await authenticator.authenticate(authorization: "Bearer \(token)", logger: logger)
            }
            #expect(authenticator.unknownTenantsCached == 100)
            #expect(authenticator.verifiedTokensCached == 1, "only a token that verified is remembered")
            // Another token of the real tenant (not the remembered one) verifies with its keys.
            let another = try await world.token(user: "bob")
            let beforeReal = pool.roundTrips.count
            #expect(try await authenticator.authenticate(authorization: "Bearer \(another)", logger: logger) != nil)
            #expect(pool.roundTrips.count == beforeReal, "the real tenant's keys stayed cached")
            #expect(authenticator.verifiedTokensCached == 2)
        }
    }

    @Test func aDeviceCannotPoseAsTheServer() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            for name in ["server", "Server", "SERVER"] {
                let device = try await world.client(server, user: "alice", device: name)
                let reply = try await device.push([Wire.change("habits", UUID(), at: Wire.at(0), record: Wire.habit())])
                #expect(reply.status == 400)
                #expect((reply.json["error"] as? JSON)?["code"] as? String == "invalid_device_id")
            }
            #expect(try await world.count("habits") == 0)
        }
    }
}

enum HabitSyncStoreHelpers {
    static func createTenant(_ pool: PGPool, name: String, pem: String) async throws -> UUID {
        try await TenantStore(pool: pool).create(name: name, key: try TenantKey.publicKey(pem: pem)).id
    }
}

/// Arbitrary claims signed with any key, for tokens the server must refuse.
enum Claims {
    struct Payload: JWTPayload {
        var tid: String?
        var sub: SubjectClaim?
        var exp: ExpirationClaim?
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    static func sign(_ claims: [String: any Sendable], with keys: JWTKeyCollection) async throws -> String {
        let payload = Payload(
            tid: claims["tid"] as? String, sub: (claims["sub"] as? String).map(SubjectClaim.init(value:)),
            exp: (claims["exp"] as? Date).map(ExpirationClaim.init(value:)))
        return try await keys.sign(payload)
    }
}
