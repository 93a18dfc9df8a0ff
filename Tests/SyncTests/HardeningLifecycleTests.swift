import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HabitSyncAuth
import HabitSyncDomain
import HabitSyncServer
import HabitSyncStore
import LibPQClient
import Logging
import ServerHarness
import Synchronization
import Testing
import TestSupport

/// Issue 9, item 7: lock order, caches, fairness, reserved ids, archived months, and how
/// `unchanged` is decided.
@Suite struct HardeningLifecycleTests {
    @Test func maintenanceNeverWaitsForAPushHoldingItsUser() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            for user in ["alice", "bob"] {
                let device = try await world.client(server, user: user)
                let habit = UUID()
                _ = try await device.push([Wire.change("habits", habit, at: Wire.at(0), record: Wire.habit())])
                _ = try await device.push([Wire.change("habits", habit, at: Wire.at(1), record: nil)])
            }
        }
        // A push of alice's holds her row lock (as the first statement of every push does)
        // while maintenance runs: maintenance purges bob's tombstone, skips alice's for the
        // next run, and finishes without waiting. Before, it deleted alice's rows and then
        // queued on her user row, the opposite order to a push.
        let report = try await world.holdingUserLock("alice") {
            let maintenance = Task {
                try await world.database.withPool(size: 1) { pool in
                    // Usage-event months are not archived here: detaching a partition needs a lock
                    // on `users` that every push holds (bounded by lock_timeout, tested apart).
                    try await MaintenanceStore(pool: pool).run(retention: .init(tombstones: 0.001, pushBatches: 90 * 86_400, conflicts: 90 * 86_400, usageEvents: 100 * 365 * 86_400),
                                                               now: Date().addingTimeInterval(1))
                }
            }
            // Either maintenance finishes, or it is seen waiting for a lock (the old order).
            let outcome = try await Self.firstOf(finished: maintenance, orWaiting: world)
            #expect(outcome != nil, "maintenance waited for the lock a push holds")
            return outcome
        }
        #expect(report?.tombstonesPurged == 1)
        #expect(report?.usersSkippedBusy == 1)
        #expect(try await world.count("habits", where: "user_id = 'alice'") == 1)
        #expect(try await world.count("habits", where: "user_id = 'bob'") == 0)
    }

    /// The task's result once it finishes, or nil as soon as a backend waits for a lock.
    static func firstOf(finished task: Task<MaintenanceStore.Report, any Error>, orWaiting world: SyncWorld) async throws -> MaintenanceStore.Report? {
        let done = Flag()
        let watcher = Task {
            _ = try await task.value
            done.set()
        }
        defer { watcher.cancel() }
        return try await world.database.withPool(size: 1) { pool in
            while true {
                if done.value { return try await task.value }
                let waiting = try await pool.withConnection {
                    try await $0.query("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'").single().decode("n", as: Int.self)
                }
                if waiting > 0 {
                    if done.value { return try await task.value }
                    return nil
                }
                try await Task.sleep(for: .milliseconds(5))
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
            let beforeReal = pool.roundTrips.count
            #expect(try await authenticator.authenticate(authorization: "Bearer \(real)", logger: logger) != nil)
            #expect(pool.roundTrips.count == beforeReal, "the real tenant's keys stayed cached")
        }
    }

    @Test func oneUsersBurstCannotTakeEveryConnection() async throws {
        let world = try await SyncWorld.make()
        // Pushes wait for the lock as long as the test holds it, not a statement timeout.
        try await world.serve(ServerConfiguration(host: "127.0.0.1", port: 0, statementTimeout: .seconds(120)), poolSize: 2) { server in
            let noisy = SyncClient(baseURL: server.baseURL, token: try await world.token(user: "noisy"), device: "phone", connections: 64)
            let quiet = SyncClient(baseURL: server.baseURL, token: try await world.token(user: "quiet"), device: "phone", connections: 1)
            #expect(try await noisy.push([Wire.change("habits", UUID(), at: Wire.at(0), record: Wire.habit())]).status == 200)
            let body = try JSONSerialization.data(withJSONObject: ["batchId": UUID().uuidString, "changes": [Wire.change("habits", UUID(), at: Wire.at(1), record: Wire.habit())]])
            let statuses = try await world.holdingUserLock("noisy") {
                // 50 concurrent pushes of one user, all stuck behind that user's row lock.
                let burst = Task {
                    try await withThrowingTaskGroup(of: Int.self) { group in
                        for index in 0..<50 {
                            group.addTask {
                                let unique = try JSONSerialization.data(withJSONObject: ["batchId": UUID().uuidString, "changes": [
                                    Wire.change("habits", UUID(), at: Wire.at(Double(index)), record: Wire.habit())]])
                                return try await noisy.pushRaw(unique).status
                            }
                        }
                        return try await group.reduce(into: [Int]()) { $0.append($1) }
                    }
                }
                try await world.waitForLockWaiters(1)
                // Another user is served while all 50 are pending: before, they held both of the
                // pool's connections and this push waited for them.
                let reply = try await quiet.pushRaw(body)
                #expect(reply.status == 200)
                return burst
            }
            let answers = try await statuses.value
            #expect(answers.count == 50)
            #expect(answers.allSatisfy { $0 == 200 || $0 == 429 }, "\(answers)")
            #expect(answers.filter { $0 == 200 }.count >= 1)
            #expect(answers.filter { $0 == 429 }.count >= 50 - 1 - UserPushQueue().maximumWaiting)
        }
    }

    /// Found by the fuzzer: a delete of a progress id the server never saw leaves a tombstone
    /// without a natural key, and the next progress push failed decoding it (500).
    @Test func aTombstoneOfAnUnknownProgressIdDoesNotBreakLaterPushes() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let device = try await world.client(server, user: "alice")
            let habit = UUID(), unknown = UUID()
            _ = try await device.push([Wire.change("habits", habit, at: Wire.at(0), record: Wire.habit()),
                                       Wire.change("dailyProgress", unknown, at: Wire.at(0), record: nil)])
            let reply = try await device.push([Wire.change("dailyProgress", unknown, at: Wire.at(1), record: Wire.progress(habit: habit)),
                                               Wire.change("dailyProgress", UUID(), at: Wire.at(2), record: Wire.progress(habit: habit, date: "2026-11-19"))])
            #expect(reply.status == 200)
            #expect(reply.status(0) == "applied" && reply.status(1) == "applied", "\(reply.results)")
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

    @Test func deletingUserSettingsPutsTheUsersDaysBackOnUTC() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let device = try await world.client(server, user: "alice")
            let settings = UUID()
            _ = try await device.push([Wire.change("userSettings", settings, at: Wire.at(0), record: ["timezone": "Pacific/Kiritimati"])])
            #expect(try await world.count("users", where: "user_id = 'alice' AND time_zone = 'Pacific/Kiritimati'") == 1)
            let reply = try await device.push([Wire.change("userSettings", settings, at: Wire.at(10), record: nil)])
            #expect(reply.status(0) == "applied")
            #expect(try await world.count("users", where: "user_id = 'alice' AND time_zone = 'UTC'") == 1)
        }
    }

    @Test func archivedMonthsKeepCountingAndTheirEventsAreNotAppliedAgain() async throws {
        let world = try await SyncWorld.make()
        let now = Date()
        let today = LocalDate(now, in: .gmt)
        try await world.serve { server in
            let device = try await world.client(server, user: "alice")
            // An exit on each of the last 70 days (UTC), the user's zone.
            var events: [JSON] = []
            var ids: [UUID] = []
            for back in 0..<70 {
                let id = UUID()
                ids.append(id)
                var event = Wire.usageEvent()
                event["timestamp"] = WireTime.format(now.addingTimeInterval(-Double(back) * 86_400))
                events.append(Wire.change("usageEvents", id, at: Wire.at(0), record: event))
            }
            _ = try await device.push(events)
            let before = try await Self.usageStreak(device)
            #expect(before == 70)

            // Archive every month that ended more than 10 days ago.
            let report = try await world.database.withPool(size: 1) { pool in
                try await MaintenanceStore(pool: pool).run(retention: .init(tombstones: 90 * 86_400, pushBatches: 90 * 86_400, conflicts: 90 * 86_400, usageEvents: 10 * 86_400))
            }
            #expect(!report.partitionsArchived.isEmpty)

            // The oldest event again: stored long ago and archived since, so unchanged, with no
            // version that was never written.
            let retry = try await device.push([events[69]])
            #expect(retry.status(0) == "unchanged", "\(retry.result(0))")
            #expect(retry.result(0)["serverVersion"] == nil)
            // A push recomputes the streak: the archived exits still count.
            _ = try await device.push([Wire.change("habits", UUID(), at: Wire.at(0), record: Wire.habit())])
            #expect(try await Self.usageStreak(device) == 70, "today \(today)")
        }
    }

    static func usageStreak(_ device: SyncClient) async throws -> Int? {
        let records = try await device.pullAll().changes.filter { $0["collection"] as? String == "usageStreak" }
        return (records.last?["record"] as? JSON)?["currentDayCount"] as? Int
    }

    @Test func unchangedIsDecidedOnTheStoredColumns() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let device = try await world.client(server, user: "alice")
            let habit = UUID()
            var changes: [JSON] = [
                Wire.change("habits", habit, at: Wire.at(0), record: Wire.habit()),
                Wire.change("reminders", UUID(), at: Wire.at(0), record: Wire.reminder(habit: habit)),
                Wire.change("dailyProgress", UUID(), at: Wire.at(0), record: Wire.progress(habit: habit)),
                Wire.change("focusSessions", UUID(), at: Wire.at(0), record: Wire.focus()),
                Wire.change("selectedApps", UUID(), at: Wire.at(0), record: Wire.selectedApp()),
                Wire.change("userSettings", UUID(), at: Wire.at(0), record: Wire.settings()),
                Wire.change("xpTransactions", UUID(), at: Wire.at(0), record: Wire.xp()),
                Wire.change("usageEvents", UUID(), at: Wire.at(0), record: Wire.usageEvent()),
                Wire.change("achievements", UUID(), at: Wire.at(0), record: Wire.achievement()),
            ]
            changes.append(Wire.change("selectedApps", UUID(), at: Wire.at(0), record: nil))
            let first = try await device.push(changes)
            #expect((0..<changes.count).allSatisfy { first.status($0) == "applied" }, "\(first.results)")
            // The same changes in a new batch: every one is unchanged.
            let again = try await device.push(changes)
            for index in 0..<changes.count {
                let collection = changes[index]["collection"] as? String ?? "?"
                let status = again.status(index)
                #expect(status == "unchanged", "\(collection): \(status ?? "none")")
            }
            // Stored content edited behind the API's back, same LWW key: no longer the same.
            try await world.database.withPool(size: 1) { pool in
                try await pool.withTransaction { connection in
                    try await connection.query("SELECT set_config('habitsync.tenant_id', \(world.tenant.uuidString.lowercased()), true), set_config('habitsync.scope', 'tenant', true)")
                    try await connection.query("UPDATE habits SET goal_unit = 'minutes' WHERE id = \(habit)")
                }
            }
            // Habits merge field by field: the two values of goalUnit at one key are settled by
            // their bytes ("pages" after "minutes"), so the change is written again.
            let edited = try await device.push([changes[0]])
            #expect(edited.status(0) == "applied", "\(edited.result(0))")
        }
    }
}

/// A one-way flag shared between tasks.
final class Flag: Sendable {
    private let state = Mutex(false)
    var value: Bool { state.withLock { $0 } }
    func set() { state.withLock { $0 = true } }
}
