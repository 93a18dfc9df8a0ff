import Foundation
import HabitSyncDomain
import HabitSyncServer
import HabitSyncStore
import LibPQClient
import ServerHarness
import SyncTestSupport
import TestSupport
import Testing

/// Per-tenant metering against a real server (docs/analytics.md, "Tenant usage"): what the
/// test sent is what `tenant_usage` holds, across a restart of the server, and the daily
/// records limit counts every replica's and every run's changes of the day.
@Suite struct TenantMeteringTests {
    /// A test that counts a day waits out the last two minutes of a UTC day first (a bounded
    /// wait): its counts must not straddle midnight.
    static func awayFromMidnight() async throws {
        let left = TenantQuotas.secondsUntilTomorrow()
        if left < 120 { try await Task.sleep(for: .seconds(left + 1)) }
    }

    static func usage(_ world: SyncWorld, tenant: UUID) async throws -> TenantUsage {
        let today = LocalDate(Date(), in: .gmt)
        return try await world.database.withPool(size: 1) { pool in
            try await TenantUsageStore(pool: pool).usage(tenant: tenant, from: today.adding(days: -1), to: today).reduce(TenantUsage()) { $0 + $1.usage }
        }
    }

    @Test func whatTheDevicesSentIsCountedAcrossARestart() async throws {
        try await Self.awayFromMidnight()
        let world = try await SyncWorld.make()
        let (other, otherKey) = try await world.addTenant("other")
        var sent = TenantUsage()
        func push(_ server: RunningServer, _ count: Int, token: String, device: String = "phone") async throws {
            let body = try JSONSerialization.data(withJSONObject: ["batchId": UUID().uuidString, "changes": TenantQuotaTests.habits(count).map(\.1)])
            let reply = try await TestHTTP.request(
                "POST", server.baseURL + "/v1/sync/push", headers: ["Authorization": "Bearer \(token)", "X-Device-Id": device, "Content-Type": "application/json"],
                body: body)
            #expect(reply.status == 200, "\(reply.text)")
            sent.pushes += 1
            sent.changesReceived += Int64(count)
            sent.changesApplied += Int64(count)
            sent.bytesIn += Int64(body.count)
            sent.bytesOut += Int64(reply.body.count)
        }
        func pull(_ server: RunningServer, token: String) async throws {
            let reply = try await TestHTTP.request("GET", server.baseURL + "/v1/sync/pull?limit=3", headers: ["Authorization": "Bearer \(token)"])
            #expect(reply.status == 200)
            sent.pulls += 1
            sent.bytesOut += Int64(reply.body.count)
        }
        let ada = try await world.token(user: "ada"), bob = try await world.token(user: "bob")
        let carol = try await world.token(user: "carol", tenant: other, key: otherKey)
        // Every flush counts the stored rows: the last one, as the server stops, the final ones.
        var configuration = ServerConfiguration.forTests
        configuration.meterStoredRowsInterval = .zero
        try await world.serve(configuration) { server in
            try await push(server, 2, token: ada)
            try await push(server, 3, token: bob)
            try await pull(server, token: ada)
            // Another tenant's use is its own.
            #expect(try await TestHTTP.request("GET", server.baseURL + "/v1/sync/pull", headers: ["Authorization": "Bearer \(carol)"]).status == 200)
        }
        // The first server stopped (its last flush); a second one counts on: ada and bob again
        // (not active a second time), ada's tablet (a new device).
        try await world.serve(configuration) { server in
            try await push(server, 5, token: ada)
            try await push(server, 1, token: ada, device: "tablet")
            try await pull(server, token: bob)
            try await pull(server, token: ada)
        }
        // ada and bob; their phones and ada's tablet (pulls named no device); the 11 habits.
        sent.activeUsers = 2
        sent.activeDevices = 3
        sent.storedRows = try await world.database.withPool(size: 1) { try await TenantLimitsStore(pool: $0).storedRows(tenantID: world.tenant) }
        #expect(sent.storedRows ?? 0 >= 11)
        #expect(try await Self.usage(world, tenant: world.tenant) == sent)
        var carolsPull = try await Self.usage(world, tenant: other)
        #expect(carolsPull.pulls == 1 && carolsPull.pushes == 0 && carolsPull.bytesOut > 0)
        carolsPull.bytesOut = 0
        var onePull = TenantUsage()
        onePull.pulls = 1
        onePull.activeUsers = 1
        onePull.storedRows = 0
        #expect(carolsPull == onePull)
        // Who was active is kept as hashes, never ids; an erased account's go with it.
        let members = try await world.count("tenant_active_members", where: "tenant_id = '\(world.tenant)'")
        #expect(members == 5)
        #expect(try await world.count("tenant_active_members", where: "position('bob' in encode(member, 'escape')) > 0") == 0)
        _ = try await world.database.withPool(size: 1) { try await AccountStore(pool: $0).eraseUser(tenant: world.tenant, user: "bob") }
        #expect(try await world.count("tenant_active_members", where: "tenant_id = '\(world.tenant)'") == 3)

        // The CLI prints the same.
        let printed = try await HabitSyncBinary.run(["tenant", "usage", "acme", "--json"], environment: ["DATABASE_URL": world.database.connectionString])
        #expect(printed.status == 0, "\(printed.stderr)")
        let days = try JSONSerialization.jsonObject(with: Data(printed.stdout.utf8)) as? [[String: Any]] ?? []
        #expect(days.reduce(0) { $0 + ($1["changesReceived"] as? Int ?? 0) } == 11)
        #expect(days.reduce(0) { $0 + ($1["pulls"] as? Int ?? 0) } == 3)
        #expect(days.reduce(0) { $0 + ($1["activeUsers"] as? Int ?? 0) } == 2 && days.reduce(0) { $0 + ($1["activeDevices"] as? Int ?? 0) } == 3)
        let bad = try await HabitSyncBinary.run(["tenant", "usage", "acme", "--from", "2026-13-01"], environment: ["DATABASE_URL": world.database.connectionString])
        #expect(bad.status != 0 && bad.stderr.contains("--from must be a date"))

        // An analyst's query of docs/analytics.md, "Tenant usage", as printed: both tenants'
        // rows; an analyst writes none.
        let docs = try String(contentsOf: TestPostgres.migrationsDirectory.deletingLastPathComponent().appendingPathComponent("docs/analytics.md"), encoding: .utf8)
        let section = try #require(docs.components(separatedBy: "## Tenant usage").last)
        let query = try #require(section.components(separatedBy: "```sql\n").dropFirst().first?.components(separatedBy: "```").first)
        let role = "analyst_\(UInt32.random(in: 0...UInt32.max))"
        try await world.database.withPool(size: 1) { pool in
            try await pool.withConnection { try await $0.simpleQuery(unsafeSQL: "CREATE ROLE \(role) LOGIN PASSWORD 'analyst-pw' IN ROLE habitsync_analyst") }
        }
        let analyst = PGPool(
            configuration: .init(connection: .init(connectionString: world.database.connectionString + " user=\(role) password=analyst-pw"), maximumConnections: 1),
            logger: TestPostgres.logger)
        defer { analyst.close() }
        try await analyst.withConnection { connection in
            let rows = try await connection.query(PGQuery(unsafeSQL: query)).rows
            #expect(Set(try rows.map { try $0.decode("tenant", as: String.self) }) == ["acme", "other"])
            #expect(try rows.reduce(0) { $0 + (try $1.decode("changes_received", as: Int64.self)) } == 11)
        }
        await #expect(throws: PGError.self) {
            try await analyst.withConnection { _ = try await $0.query("UPDATE tenant_usage SET pushes = 0") }
        }
    }

    @Test func aTenantErasedWhileCountedTakesItsRowsAndHoldsUpNoOther() async throws {
        try await Self.awayFromMidnight()
        let world = try await SyncWorld.make()
        let (gone, goneKey) = try await world.addTenant("gone")
        try await TenantQuotaTests.setLimits(world, tenant: gone, [.streams: 5])
        let ada = try await world.token(user: "ada"), dana = try await world.token(user: "dana", tenant: gone, key: goneKey)
        try await world.serve { server in
            #expect(try await TenantQuotaTests.push(server, token: dana, TenantQuotaTests.habits(2).map(\.1)).status == 200)
            #expect(try await TenantQuotaTests.push(server, token: ada, TenantQuotaTests.habits(3).map(\.1)).status == 200)
            // Erased while this server still holds its counts (or just after it wrote them).
            _ = try await world.database.withPool(size: 1) { try await AccountStore(pool: $0).eraseTenant(gone) }
            #expect(try await TenantQuotaTests.push(server, token: ada, TenantQuotaTests.habits(4).map(\.1)).status == 200)
        }
        #expect(try await world.count("tenant_usage", where: "tenant_id = '\(gone)'") == 0)
        #expect(try await world.count("tenant_limits", where: "tenant_id = '\(gone)'") == 0)
        #expect(try await Self.usage(world, tenant: world.tenant).changesReceived == 7)
    }

    @Test func theDailyLimitCountsTheDayAcrossARestart() async throws {
        try await Self.awayFromMidnight()
        let world = try await SyncWorld.make()
        try await TenantQuotaTests.setLimits(world, tenant: world.tenant, [.recordsPerDay: 10])
        let ada = try await world.token(user: "ada")
        // Flushes every 50 ms: the count must hold while flushes write it between the pushes.
        var configuration = TenantQuotaTests.configuration()
        configuration.meterFlushInterval = .milliseconds(50)
        try await world.serve(configuration) { server in
            #expect(try await TenantQuotaTests.push(server, token: ada, TenantQuotaTests.habits(6).map(\.1)).status == 200)
            // 6 + 5 > 10: refused whole, until tomorrow.
            let over = try await TenantQuotaTests.push(server, token: ada, TenantQuotaTests.habits(5).map(\.1))
            #expect(over.status == 429 && TenantQuotaTests.refusal(over).limit == "recordsPerDay", "\(over.text)")
            let wait = try #require(over.header("Retry-After").flatMap(Int.init))
            #expect(wait >= 1 && wait <= 86_400)
            #expect(try await TenantQuotaTests.push(server, token: ada, TenantQuotaTests.habits(4).map(\.1)).status == 200)
            #expect(try await TenantQuotaTests.push(server, token: ada, TenantQuotaTests.habits(1).map(\.1)).status == 429)
        }
        // A new server knows the day's count from the database.
        try await world.serve(configuration) { server in
            let over = try await TenantQuotaTests.push(server, token: ada, TenantQuotaTests.habits(1).map(\.1))
            #expect(over.status == 429 && TenantQuotaTests.refusal(over).limit == "recordsPerDay", "\(over.text)")
            // Deletes count as changes too, but a tenant may lift the limit: then it goes on.
            try await TenantQuotaTests.setLimits(world, tenant: world.tenant, [.recordsPerDay: nil])
            #expect(try await TenantQuotaTests.push(server, token: ada, TenantQuotaTests.habits(1).map(\.1)).status == 200)
        }
        #expect(try await world.count("habits") == 11)
        let usage = try await Self.usage(world, tenant: world.tenant)
        #expect(usage.changesReceived == 11 && usage.pushesRefused == 3 && usage.pushes == 3)
    }
}
