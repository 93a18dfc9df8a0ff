import Foundation
import HabitSyncClient
import HabitSyncDomain
import HabitSyncServer
import HabitSyncStore
import ServerHarness
import SyncTestSupport
import TestSupport
import Testing

/// Per-tenant quotas against a real server (docs/operations.md, "Tenant quotas"): over a limit a
/// push is `429 tenant_limit_exceeded` naming the limit, with a `Retry-After`, and nothing of it
/// is stored; the other tenants' devices go on as before. No check depends on how fast the
/// machine is: each rate is a share of a thousand replicas, so a refill takes 1,000 s or more,
/// far longer than any run of a loaded machine.
@Suite struct TenantQuotaTests {
    /// Limits read on every request: a limit set by the test applies at once.
    static func configuration(replicas: Int = 1) -> ServerConfiguration {
        var configuration = ServerConfiguration.forTests
        configuration.tenantQuotas = TenantQuotas.Settings(cacheLifetime: .zero, storageRefresh: .seconds(3600), replicas: replicas)
        return configuration
    }

    static func setLimits(_ world: SyncWorld, tenant: UUID, _ changes: [TenantLimits.Kind: Int64?]) async throws {
        _ = try await world.database.withPool(size: 1) { try await TenantLimitsStore(pool: $0).setLimits(tenantID: tenant, changes) }
    }

    static func push(_ server: RunningServer, token: String, _ changes: [JSON], device: String = "phone") async throws -> HTTPReply {
        let body = try JSONSerialization.data(withJSONObject: ["batchId": UUID().uuidString, "changes": changes])
        return try await TestHTTP.request(
            "POST", server.baseURL + "/v1/sync/push", headers: ["Authorization": "Bearer \(token)", "X-Device-Id": device, "Content-Type": "application/json"],
            body: body)
    }

    /// The error of a refusal: its code and the limit it names.
    static func refusal(_ reply: HTTPReply) -> (code: String?, limit: String?) {
        let error = (try? reply.json())?["error"] as? JSON
        return (error?["code"] as? String, error?["limit"] as? String)
    }

    static func habits(_ count: Int) -> [(UUID, JSON)] {
        (0..<count).map { index in
            let id = UUID()
            return (id, Wire.change("habits", id, at: Wire.at(Double(index)), record: Wire.habit(name: "Habit \(index)")))
        }
    }

    @Test func pushesASecondAreTheTenantsAllUsersTogetherAndTheOtherTenantGoesOn() async throws {
        let world = try await SyncWorld.make(name: "flooding")
        let (quiet, quietKey) = try await world.addTenant("quiet")
        // 1 push a second shared by 1,000 replicas: this one admits one push, then the next in
        // 1,000 s.
        try await Self.setLimits(world, tenant: world.tenant, [.pushesPerSecond: 1])
        try await world.serve(Self.configuration(replicas: 1000)) { server in
            let ada = try await world.token(user: "ada"), bob = try await world.token(user: "bob")
            let first = Self.habits(1), refused = Self.habits(2)
            #expect(try await Self.push(server, token: ada, first.map(\.1)).status == 200)
            // Another user of the same tenant: the limit is the tenant's.
            let over = try await Self.push(server, token: bob, refused.map(\.1))
            #expect(over.status == 429)
            #expect(Self.refusal(over).code == "tenant_limit_exceeded" && Self.refusal(over).limit == "pushesPerSecond", "\(over.text)")
            let wait = try #require(over.header("Retry-After").flatMap(Int.init))
            #expect(wait > 1 && wait <= 1000, "Retry-After \(wait)")
            // Nothing of the refused batch is stored; the admitted one is.
            #expect(try await world.count("habits", where: "user_id = 'bob'") == 0)
            #expect(try await world.count("habits", where: "user_id = 'ada'") == 1)
            // The quiet tenant has no limit: its pushes go through while the other is refused.
            let carol = try await world.token(user: "carol", tenant: quiet, key: quietKey)
            for _ in 0..<5 { #expect(try await Self.push(server, token: carol, Self.habits(2).map(\.1)).status == 200) }
            #expect(try await world.count("habits", where: "tenant_id = '\(quiet)'") == 10)
            // Pulls are not limited.
            let pull = try await TestHTTP.request("GET", server.baseURL + "/v1/sync/pull", headers: ["Authorization": "Bearer \(bob)"])
            #expect(pull.status == 200)
            // /metrics counts each tenant apart, by its id.
            let samples = try parsePrometheusText(try await server.get("/metrics").text)
            let flooding = world.tenant.uuidString.lowercased(), quietLabel = quiet.uuidString.lowercased()
            #expect(samples["habitsync_tenant_pushes_total{tenant=\"\(flooding)\",outcome=\"refused\"}"] == 1, "\(samples.keys.filter { $0.contains("tenant") })")
            #expect(samples["habitsync_tenant_pushes_total{tenant=\"\(flooding)\",outcome=\"taken\"}"] == 1)
            #expect(samples["habitsync_tenant_limit_refusals_total{tenant=\"\(flooding)\",limit=\"pushesPerSecond\"}"] == 1)
            #expect(samples["habitsync_tenant_pushes_total{tenant=\"\(quietLabel)\",outcome=\"taken\"}"] == 5)
            #expect(samples["habitsync_tenant_changes_received_total{tenant=\"\(quietLabel)\"}"] == 10)
            #expect(samples["habitsync_tenant_pulls_total{tenant=\"\(flooding)\"}"] == 1)
        }
    }

    @Test func aLargeBatchPutsTheRecordsBucketInDebtAndTheSDKKeepsItsOutbox() async throws {
        let world = try await SyncWorld.make()
        try await Self.setLimits(world, tenant: world.tenant, [.recordsPerSecond: 1])
        // 1 a second over 1,000 replicas: a refill of the debt below takes 50,000 s.
        try await world.serve(Self.configuration(replicas: 1000)) { server in
            let ada = try await world.token(user: "ada")
            // A full bucket admits a batch larger than it holds; the tenant then owes 49 changes.
            #expect(try await Self.push(server, token: ada, Self.habits(50).map(\.1)).status == 200)
            let over = try await Self.push(server, token: ada, Self.habits(1).map(\.1))
            #expect(over.status == 429 && Self.refusal(over).limit == "recordsPerSecond", "\(over.text)")
            #expect((over.header("Retry-After").flatMap(Int.init) ?? 0) >= 1)
            #expect(try await world.count("habits") == 50)
            // The SDK: the push is refused, told when to come back, and the record waits in the
            // outbox, unsynced.
            let store = try LocalStore(path: nil, deviceID: "phone")
            let engine = SyncEngine(store: store, baseURL: try #require(URL(string: server.baseURL + "/")), transport: URLSessionTransport.patient()) { ada }
            let saved = try store.save(Habit(name: "Stretch", startDate: try #require(LocalDate(Wire.day(-19)))))
            let error = await #expect(throws: SyncError.self) { try await engine.sync() }
            guard case .retryLater(let seconds)? = error else {
                Issue.record("the SDK was told \(String(describing: error)), not to retry later")
                return
            }
            #expect(seconds >= 1)
            #expect(try store.fetch(Habit.self, id: saved.id)?.syncStatus == .pending)
            #expect(try await world.count("habits") == 50)
        }
    }

    @Test func aTenantOverItsStorageMayStillDeleteAndTheOthersStore() async throws {
        let world = try await SyncWorld.make()
        let (other, otherKey) = try await world.addTenant("other")
        try await world.serve(Self.configuration()) { server in
            let ada = try await world.token(user: "ada")
            let stored = Self.habits(3)
            #expect(try await Self.push(server, token: ada, stored.map(\.1)).status == 200)
            let rows = try await world.database.withPool(size: 1) { try await TenantLimitsStore(pool: $0).storedRows(tenantID: world.tenant) }
            // The three habits and the records the server derives for the user.
            #expect(rows >= 3)
            try await Self.setLimits(world, tenant: world.tenant, [.storageRows: rows])
            let over = try await Self.push(server, token: ada, Self.habits(1).map(\.1))
            #expect(over.status == 429 && Self.refusal(over).limit == "storageRows", "\(over.text)")
            #expect(try await world.count("habits", where: "deleted_at IS NULL") == 3)
            // A push that only deletes frees rows: taken.
            let delete = Wire.change("habits", stored[0].0, at: Wire.at(100), record: nil)
            let freed = try await Self.push(server, token: ada, [delete])
            #expect(freed.status == 200, "\(freed.text)")
            #expect(try await world.count("habits", where: "deleted_at IS NULL") == 2)
            // Another tenant stores on.
            let carol = try await world.token(user: "carol", tenant: other, key: otherKey)
            #expect(try await Self.push(server, token: carol, Self.habits(2).map(\.1)).status == 200)
        }
    }

    @Test func theTenantsStreamsAreCountedAcrossItsUsers() async throws {
        let world = try await SyncWorld.make()
        let (other, otherKey) = try await world.addTenant("other")
        try await Self.setLimits(world, tenant: world.tenant, [.streams: 1])
        try await world.serve(Self.configuration()) { server in
            try await RealtimeKit.waitUntilListening(server)
            let ada = try await RealtimeKit.engine(world, server, user: "ada", device: "watch")
            var open = try await RealtimeKit.open(ada)
            let refused = try await TestHTTP.request(
                "GET", server.baseURL + "/v1/sync/events", headers: ["Authorization": "Bearer \(try await world.token(user: "bob"))"])
            #expect(refused.status == 429 && Self.refusal(refused).limit == "streams", "\(refused.text)")
            #expect(refused.header("Retry-After") == "5")
            // The other tenant's devices open theirs.
            let carol = try await RealtimeKit.engine(world, server, user: "carol", device: "watch", tenant: (other, otherKey))
            let carolEvents = try await RealtimeKit.open(carol)
            // Ada's stream still works: a change of hers elsewhere reaches it.
            let phone = try await world.client(server, user: "ada", device: "phone")
            #expect(try await phone.push([Wire.change("habits", UUID(), at: Wire.at(0), record: Wire.habit())]).status == 200)
            #expect(try await RealtimeKit.nextEvent(&open)?.name == "change")
            _ = carolEvents
        }
    }
}
