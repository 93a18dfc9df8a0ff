import Crypto
import Foundation
import HabitSyncClient
import HabitSyncDomain
import HabitSyncServer
import HabitSyncStore
import LibPQClient
import ServerHarness
import SyncTestSupport
import TestSupport
import Testing

/// APNs background wakes against a real server and PostgreSQL, with Apple's push service
/// standing in on loopback (HTTP/2 over TLS): the JWT, the headers and payload Apple requires,
/// one wake per device per interval, tokens APNs refuses dropped, the device endpoint's rules
/// and the SDK's two calls.
@Suite struct WakeTests {
    static let notOnCitus: Comment = "wakes are not sent on Citus yet (deploy/README.md)"

    static let signingKey = P256.Signing.PrivateKey()

    static func configuration(_ apns: LoopbackAPNs) -> ServerConfiguration {
        var configuration = ServerConfiguration.forTests
        configuration.wakes.enabled = true
        configuration.wakes.endpoint = apns.endpoint
        configuration.wakes.additionalTrustRoots = [apns.trustRoot]
        configuration.wakes.pollInterval = .milliseconds(50)
        return configuration
    }

    static func setAPNs(_ world: SyncWorld, interval: Duration = .seconds(3600)) async throws {
        let settings = try APNsSettings(
            keyID: "ABC123DEFG", teamID: "TEAM123456", topic: "com.example.habits", environment: .sandbox, signingKey: signingKey.pemRepresentation,
            wakeInterval: interval)
        try await world.database.withPool(size: 1) { try await TenantAPNsStore(pool: $0).set(tenant: world.tenant, settings) }
    }

    static func register(_ server: RunningServer, token: String, device: String, body: String) async throws -> HTTPReply {
        try await TestHTTP.request(
            "PUT", server.baseURL + "/v1/devices/\(device)/push-token", headers: ["Authorization": "Bearer \(token)", "Content-Type": "application/json"],
            body: Data(body.utf8))
    }

    static func push(_ server: RunningServer, token: String, device: String) async throws {
        let body = try JSONSerialization.data(withJSONObject: [
            "batchId": UUID().uuidString, "changes": [Wire.change("habits", UUID(), at: Wire.at(0), record: Wire.habit())],
        ])
        let reply = try await TestHTTP.request(
            "POST", server.baseURL + "/v1/sync/push", headers: ["Authorization": "Bearer \(token)", "X-Device-Id": device, "Content-Type": "application/json"],
            body: body)
        #expect(reply.status == 200, "\(reply.text)")
    }

    /// Waits until `condition` holds: checked every 50 ms, a bounded number of times (a count,
    /// not a deadline: a busy machine only takes longer).
    static func wait(checks: Int = 2400, _ condition: () async throws -> Bool) async throws {
        for _ in 0..<checks {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("the condition never held")
    }

    static func hex(_ seed: UInt8) -> String { String(repeating: String(format: "%02x", seed), count: 32) }

    @Test(.disabled(if: TestPostgres.onCitus, Self.notOnCitus)) func aPushWakesTheUsersOtherDevicesOnceEachAndTokensAPNsRefusesAreDropped() async throws {
        let world = try await SyncWorld.make()
        let (watch, tablet, bad, gone, phone) = (Self.hex(1), Self.hex(2), Self.hex(3), Self.hex(4), Self.hex(5))
        let apns = try await LoopbackAPNs.start(answers: [bad: (400, "BadDeviceToken"), gone: (410, "Unregistered")])
        defer { Task { await apns.stop() } }
        try await Self.setAPNs(world)
        try await world.serve(Self.configuration(apns)) { server in
            let ada = try await world.token(user: "ada"), bob = try await world.token(user: "bob")
            for (device, token) in [("phone", phone), ("watch", watch), ("tablet", tablet.uppercased()), ("old-ipad", bad), ("lost-ipad", gone)] {
                let reply = try await Self.register(server, token: ada, device: device, body: #"{"token":"\#(token)"}"#)
                #expect(reply.status == 204, "\(reply.text)")
            }
            // Bob's device hears nothing of Ada's pushes.
            #expect(try await Self.register(server, token: bob, device: "phone", body: #"{"token":"\#(Self.hex(9))"}"#).status == 204)

            try await Self.push(server, token: ada, device: "phone")
            try await Self.wait { apns.notifications.count >= 4 }
            try await Self.wait { try await world.count("device_push_tokens", where: "user_id = 'ada' AND device_id <> 'phone' AND (wake_due OR last_wake_at IS NULL)") == 0 }
            let notifications = apns.notifications
            // The pushing device is not woken; each other device once; bob's not at all.
            #expect(Set(notifications.map(\.token)) == [watch, tablet, bad, gone])
            #expect(notifications.count == 4)
            for notification in notifications {
                #expect(notification.overHTTP2)
                #expect(notification.headers["apns-push-type"] == "background")
                #expect(notification.headers["apns-priority"] == "5")
                #expect(notification.headers["apns-topic"] == "com.example.habits")
                let body = try JSONSerialization.jsonObject(with: Data(notification.body)) as? [String: Any]
                #expect(NSDictionary(dictionary: body ?? [:]) == NSDictionary(dictionary: ["aps": ["content-available": 1]]))
                try Self.checkProviderToken(notification.headers["authorization"])
            }
            // The tokens APNs refused for good are gone (once the waker recorded what came of
            // its sends, after it claimed them); the others stay.
            try await Self.wait { try await world.count("device_push_tokens", where: "device_id IN ('old-ipad', 'lost-ipad')") == 0 }
            #expect(
                Set(
                    try await world.database.withPool(size: 1) { pool in
                        try await pool.withConnection { connection in
                            try await connection.query("SELECT device_id FROM device_push_tokens WHERE user_id = 'ada'").rows.map { try $0.decode("device_id", as: String.self) }
                        }
                    }) == ["phone", "watch", "tablet"])

            // Five more pushes within the interval (an hour): no wake yet, one is due.
            for _ in 0..<5 { try await Self.push(server, token: ada, device: "phone") }
            #expect(try await world.count("device_push_tokens", where: "user_id = 'ada' AND wake_due") == 2)
            #expect(apns.notifications.count == 4)
            // The interval passes (the last wakes an hour old): one wake each for the five pushes.
            try await world.database.withPool(size: 1) { pool in
                try await pool.withConnection { try await $0.query("UPDATE device_push_tokens SET last_wake_at = last_wake_at - interval '1 hour'") }
            }
            try await Self.wait { apns.notifications.count >= 6 }
            try await Self.wait { try await world.count("device_push_tokens", where: "user_id = 'ada' AND wake_due") == 0 }
            #expect(apns.notifications.count == 6)
            #expect(apns.notifications.suffix(2).map(\.token).sorted() == [watch, tablet].sorted())

            // A device that registers again replaces its token.
            #expect(try await Self.register(server, token: ada, device: "watch", body: #"{"token":"\#(Self.hex(7))"}"#).status == 204)
            #expect(try await world.count("device_push_tokens", where: "device_id = 'watch' AND user_id = 'ada' AND token = '\(Self.hex(7))'") == 1)
        }
        // An erased account's tokens go with it.
        let report = try await world.database.withPool(size: 1) { try await AccountStore(pool: $0).eraseUser(tenant: world.tenant, user: "ada") }
        #expect(report.rows["device_push_tokens"] == 3)
        #expect(try await world.count("device_push_tokens", where: "user_id = 'ada'") == 0)
    }

    /// The provider token: ES256 over header and claims, with the tenant's key id and team,
    /// made within the last minutes, verifying with the key's public half.
    static func checkProviderToken(_ authorization: String?) throws {
        let bearer = try #require(authorization)
        #expect(bearer.hasPrefix("bearer "))
        let parts = bearer.dropFirst("bearer ".count).split(separator: ".").map(String.init)
        try #require(parts.count == 3)
        func decoded(_ part: String) -> Data? {
            var text = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            while text.count % 4 != 0 { text += "=" }
            return Data(base64Encoded: text)
        }
        let header = try JSONSerialization.jsonObject(with: try #require(decoded(parts[0]))) as? [String: Any]
        let claims = try JSONSerialization.jsonObject(with: try #require(decoded(parts[1]))) as? [String: Any]
        #expect(header?["alg"] as? String == "ES256" && header?["kid"] as? String == "ABC123DEFG")
        #expect(claims?["iss"] as? String == "TEAM123456")
        let issuedAt = try #require((claims?["iat"] as? NSNumber)?.doubleValue)
        #expect(abs(Date().timeIntervalSince1970 - issuedAt) < 600)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(decoded(parts[2])))
        #expect(signingKey.publicKey.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8)))
    }

    @Test func theDeviceEndpointRefusesBadInputAndAnErasedAccount() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let ada = try await world.token(user: "ada")
            let refusals: [(device: String, body: String, status: Int, code: String)] = [
                ("phone", #"{"token":"abc"}"#, 400, "invalid_field"),
                ("phone", #"{"token":"\#(String(repeating: "a", count: 63))"}"#, 400, "invalid_field"),
                ("phone", #"{"token":"\#(String(repeating: "g", count: 64))"}"#, 400, "invalid_field"),
                ("phone", #"{"token":"\#(String(repeating: "a", count: 402))"}"#, 400, "invalid_field"),
                ("phone", #"{"token":"\#(Self.hex(1))\n"}"#, 400, "invalid_field"),
                ("phone", #"{"token":"\#(Self.hex(1))","extra":1}"#, 400, "unknown_field"),
                ("phone", #"{"token":1e308}"#, 400, "invalid_field"),
                ("phone", "not json", 400, "malformed_json"),
                ("server", #"{"token":"\#(Self.hex(1))"}"#, 400, "invalid_device_id"),
                ("ph%00one", #"{"token":"\#(Self.hex(1))"}"#, 400, "invalid_device_id"),
                (String(repeating: "d", count: 101), #"{"token":"\#(Self.hex(1))"}"#, 400, "invalid_device_id"),
                ("phone", #"{"token":"\#(String(repeating: "a", count: 5000))"}"#, 413, "too_large"),
            ]
            for refusal in refusals {
                let reply = try await Self.register(server, token: ada, device: refusal.device, body: refusal.body)
                #expect(reply.status == refusal.status, "\(refusal.device) \(refusal.body.prefix(40)): \(reply.text)")
                #expect((try? reply.json()["error"] as? JSON)??["code"] as? String == refusal.code, "\(refusal.body.prefix(40)): \(reply.text)")
            }
            #expect(try await world.count("device_push_tokens") == 0)
            // A device id of any printable characters, percent-encoded in the path.
            #expect(try await Self.register(server, token: ada, device: "Ada%E2%80%99s%20iPhone", body: #"{"token":"\#(Self.hex(1))"}"#).status == 204)
            #expect(try await world.count("device_push_tokens", where: "device_id = 'Ada’s iPhone'") == 1)
            let removed = try await TestHTTP.request(
                "DELETE", server.baseURL + "/v1/devices/Ada%E2%80%99s%20iPhone/push-token", headers: ["Authorization": "Bearer \(ada)"])
            #expect(removed.status == 204)
            #expect(try await world.count("device_push_tokens") == 0)

            // This tenant has no APNs key: a push marks no token due.
            #expect(try await Self.register(server, token: ada, device: "watch", body: #"{"token":"\#(Self.hex(2))"}"#).status == 204)
            try await Self.push(server, token: ada, device: "phone")
            #expect(try await world.count("device_push_tokens", where: "wake_due") == 0)

            _ = try await world.database.withPool(size: 1) { try await AccountStore(pool: $0).eraseUser(tenant: world.tenant, user: "ada") }
            let erased = try await Self.register(server, token: ada, device: "phone", body: #"{"token":"\#(Self.hex(1))"}"#)
            #expect(erased.status == 410 && erased.text.contains("account_erased"))
            #expect(try await world.count("device_push_tokens") == 0)
        }
    }

    /// What `set-apns` and the device endpoint accept, the tables accept, and what the tables
    /// refuse, they refuse first: ids, topics, keys and tokens at and past every edge.
    @Test func theRulesAndTheTablesChecksAgree() async throws {
        let world = try await SyncWorld.make()
        let key = Self.signingKey.pemRepresentation
        let ids = ["ABC123DEFG", "abc123defg", "ABC123DEF", "ABC123DEFGH", "ABC123DEF\u{0}", "ABC 23DEFG", "ABC123DEF\n", "ÄBC123DEFG", ""]
        let topics = [
            "com.example.habits", "com.example", "com", "com..example", ".com.example", "com.example.", "com.ex_ample", "com.exämple", "com.example\n",
            "a." + String(repeating: "b", count: 253), "a." + String(repeating: "b", count: 254), "com.example.watchkitapp.complication",
        ]
        let keys = [
            key, String(key.dropFirst()), "-----BEGIN PRIVATE KEY-----\n", key + String(repeating: "A", count: 4096 - key.utf8.count), key + String(repeating: "A", count: 4097 - key.utf8.count),
        ]
        func tableTakes(_ keyID: String, _ topic: String, _ signingKey: String) async -> Bool {
            do {
                try await world.database.withPool(size: 1) { pool in
                    try await pool.withTransaction { connection in
                        try await RequestScope.set(on: connection, tenantID: world.tenant, userID: nil)
                        try await connection.query(
                            "INSERT INTO tenant_apns (tenant_id, key_id, team_id, topic, environment, signing_key) VALUES (\(world.tenant), \(keyID), 'TEAM123456', \(topic), 'sandbox', \(signingKey))"
                        )
                        throw CancellationError()  // roll back
                    }
                }
                return true
            } catch is CancellationError {
                return true
            } catch {
                return false
            }
        }
        for (keyID, topic, signingKey) in ids.map({ ($0, "com.example.habits", key) }) + topics.map({ ("ABC123DEFG", $0, key) }) + keys.map({ ("ABC123DEFG", "com.example.habits", $0) }) {
            let swift = (try? APNsSettings(keyID: keyID, teamID: "TEAM123456", topic: topic, environment: .sandbox, signingKey: signingKey)) != nil
            let table = await tableTakes(keyID, topic, signingKey)
            #expect(swift == table, "\(keyID.debugDescription) \(topic.prefix(40).debugDescription) key of \(signingKey.utf8.count) bytes: the command \(swift), the table \(table)")
        }
        // Tokens: what the endpoint takes (lowercased), the table takes.
        let tokens = [
            "ab", String(repeating: "a", count: 15), String(repeating: "a", count: 16), String(repeating: "a", count: 17), String(repeating: "AB", count: 32),
            String(repeating: "a", count: 400), String(repeating: "a", count: 402), String(repeating: "g", count: 64), String(repeating: "a", count: 63) + "\n", "",
        ]
        _ = try await world.database.withPool(size: 1) { pool in
            try await pool.withConnection { try await $0.query("INSERT INTO users (tenant_id, user_id) VALUES (\(world.tenant), 'ada')") }
        }
        for token in tokens {
            let swift = PushTokenStore.checkedToken(token)
            var table = true
            do {
                try await world.database.withPool(size: 1) { pool in
                    try await pool.withTransaction { connection in
                        try await RequestScope.set(on: connection, tenantID: world.tenant, userID: "ada")
                        try await connection.query("INSERT INTO device_push_tokens (tenant_id, user_id, device_id, token) VALUES (\(world.tenant), 'ada', 'phone', \(swift ?? token))")
                        throw CancellationError()
                    }
                }
            } catch is CancellationError {
            } catch {
                table = false
            }
            #expect((swift != nil) == table, "\(token.prefix(20).debugDescription) of \(token.count): the endpoint \(swift != nil), the table \(table)")
        }
    }

    @Test(.disabled(if: TestPostgres.onCitus, Self.notOnCitus)) func theSDKRegistersItsTokenAndAWakesSyncReportsNewData() async throws {
        let world = try await SyncWorld.make()
        let apns = try await LoopbackAPNs.start()
        defer { Task { await apns.stop() } }
        try await Self.setAPNs(world, interval: .seconds(1))
        try await world.serve(Self.configuration(apns)) { server in
            let clock = ClientSDKTests.DeviceClock()
            let phone = try await ClientSDKTests.device(world, server, "phone", clock: clock)
            let watch = try await ClientSDKTests.device(world, server, "watch", clock: clock)
            try await watch.registerPushToken(Data(repeating: 0xAB, count: 32))
            #expect(try await world.count("device_push_tokens", where: "device_id = 'watch' AND token = '\(String(repeating: "ab", count: 32))'") == 1)
            try phone.store.save(.habits, id: UUID(), fields: ClientSDKTests.habit)
            _ = try await phone.sync()
            try await Self.wait { apns.notifications.contains { $0.token == String(repeating: "ab", count: 32) } }
            // What the app does in didReceiveRemoteNotification: sync, and say what it brought.
            #expect(await watch.handleBackgroundWake() == .newData)
            #expect(await watch.handleBackgroundWake() == .noData)
            try await watch.unregisterPushToken()
            #expect(try await world.count("device_push_tokens") == 0)
        }
    }
}
