import Foundation
import FoundationNetworking
import HabitSyncAuth
import HabitSyncDomain
import HabitSyncServer
import HabitSyncStore
import LibPQClient
import Logging
import ServerHarness
import SyncTestSupport
import Synchronization
import TestSupport
import Testing

/// Eight writers push for the same user at once while a reader pulls in a loop. At the end
/// the reader's accumulated state equals the database exactly: no pull ever skipped a change.
/// With versions from a sequence or a clock, a lower version could commit after a pull had
/// returned a higher one, and the reader would miss it.
@Suite struct ConcurrencyTests {
    @Test func concurrentWritersNeverMakeAReaderMissAChange() async throws {
        let world = try await SyncWorld.make()
        try await world.serve(poolSize: 12) { server in
            let writers = 8, batchesPerWriter = 12
            let habits = (0..<6).map { _ in UUID() }
            let reader = try await world.client(server, user: "alice", device: "reader")
            _ = try await reader.push(habits.map { Wire.change("habits", $0, at: Wire.at(0), record: Wire.habit()) })
            let done = FinishedWriters()

            async let readerState: [String: (version: Int, op: String)] = {
                var state: [String: (version: Int, op: String)] = [:]
                var cursor: String? = nil
                var finalPasses = 0
                while finalPasses < 2 {
                    if done.count == writers { finalPasses += 1 }
                    let page = try await reader.pull(cursor: cursor, limit: 50)
                    #expect(page.status == 200)
                    var last = 0
                    for change in page.changes {
                        let version = change["serverVersion"] as? Int ?? 0
                        #expect(version > last, "versions ascend within a page")
                        last = version
                        state["\(change["collection"]!)/\(change["id"]!)"] = (version, change["op"] as? String ?? "")
                    }
                    cursor = page.cursor
                }
                return state
            }()

            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<writers {
                    group.addTask {
                        let device = try await world.client(server, user: "alice", device: "writer-\(writer)")
                        var ids: [UUID] = []
                        for batch in 0..<batchesPerWriter {
                            var changes: [JSON] = []
                            for n in 0..<(3 + (batch + writer) % 5) {
                                let time = Wire.at(Double(batch * 10 + n))
                                switch (batch + n + writer) % 4 {
                                case 0:
                                    let id = UUID()
                                    ids.append(id)
                                    changes.append(Wire.change("selectedApps", id, at: time, record: Wire.selectedApp(order: n)))
                                case 1 where !ids.isEmpty:
                                    changes.append(Wire.change("selectedApps", ids.randomElement()!, at: time, record: n % 2 == 0 ? nil : Wire.selectedApp(order: 99)))
                                case 2:
                                    changes.append(
                                        Wire.change(
                                            "dailyProgress", UUID(), at: time,
                                            record: Wire.progress(habit: habits.randomElement()!, date: String(format: "2026-10-%02d", 1 + (batch * 7 + n) % 28), count: batch)))
                                default:
                                    changes.append(Wire.change("usageEvents", UUID(), at: time, record: Wire.usageEvent()))
                                }
                            }
                            let reply = try await device.push(changes)
                            #expect(reply.status == 200)
                        }
                        done.finish()
                    }
                }
                try await group.waitForAll()
            }
            let seen = try await readerState

            // The database's view, as the owner.
            let stored = try await world.database.withPool(size: 1) { pool in
                try await pool.withConnection { connection in
                    try await connection.query(
                        """
                        SELECT 'habits/' || id AS key, server_version, deleted_at IS NOT NULL AS deleted FROM habits
                        UNION ALL SELECT 'selectedApps/' || id, server_version, deleted_at IS NOT NULL FROM selected_apps
                        UNION ALL SELECT 'dailyProgress/' || id, server_version, deleted_at IS NOT NULL FROM daily_progress
                        UNION ALL SELECT 'usageEvents/' || id, server_version, false FROM usage_events
                        UNION ALL SELECT 'xpTransactions/' || id, server_version, false FROM xp_transactions
                        UNION ALL SELECT 'globalStreak/' || id, server_version, false FROM global_streaks
                        UNION ALL SELECT 'userProgress/' || id, server_version, false FROM user_progress
                        UNION ALL SELECT 'usageStreak/' || id, server_version, false FROM usage_streaks
                        """
                    ).rows.map { row in
                        (try row.decode("key", as: String.self), try row.decode("server_version", as: Int.self), try row.decode("deleted", as: Bool.self))
                    }
                }
            }
            #expect(stored.count > writers * batchesPerWriter)
            #expect(seen.count == stored.count, "the reader saw \(seen.count) records, the database holds \(stored.count)")
            var mismatches = 0
            for (key, version, deleted) in stored {
                guard let observed = seen[key], observed.version == version, observed.op == (deleted ? "delete" : "upsert") else {
                    mismatches += 1
                    continue
                }
            }
            #expect(mismatches == 0, "\(mismatches) records differ between the reader and the database")
            // Versions are unique per user across collections.
            #expect(Set(stored.map(\.1)).count == stored.count)
        }
    }

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
                    try await MaintenanceStore(pool: pool).run(
                        retention: .init(tombstones: 0.001, pushBatches: 90 * 86_400, conflicts: 90 * 86_400, usageEvents: 100 * 365 * 86_400),
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

    @Test func oneUsersBurstCannotTakeEveryConnection() async throws {
        let world = try await SyncWorld.make()
        // Pushes wait for the lock as long as the test holds it, not a statement timeout.
        try await world.serve(.forTests, poolSize: 2) { server in
            let noisy = SyncClient(baseURL: server.baseURL, token: try await world.token(user: "noisy"), device: "phone", connections: 64)
            let quiet = SyncClient(baseURL: server.baseURL, token: try await world.token(user: "quiet"), device: "phone", connections: 1)
            #expect(try await noisy.push([Wire.change("habits", UUID(), at: Wire.at(0), record: Wire.habit())]).status == 200)
            let body = try JSONSerialization.data(withJSONObject: ["batchId": UUID().uuidString, "changes": [Wire.change("habits", UUID(), at: Wire.at(1), record: Wire.habit())]])
            // The pushes refused so far: the lock is held until every push beyond the running
            // one and the queue's waiters has been answered, however slowly a busy machine
            // delivers them (a push arriving after the release would rightly succeed).
            let refused = FinishedWriters()
            let mustRefuse = 50 - 1 - UserPushQueue().maximumWaiting
            let statuses = try await world.holdingUserLock("noisy") {
                // 50 concurrent pushes of one user, all stuck behind that user's row lock.
                let burst = Task {
                    try await withThrowingTaskGroup(of: Int.self) { group in
                        for index in 0..<50 {
                            group.addTask {
                                let unique = try JSONSerialization.data(withJSONObject: [
                                    "batchId": UUID().uuidString,
                                    "changes": [
                                        Wire.change("habits", UUID(), at: Wire.at(Double(index)), record: Wire.habit())
                                    ],
                                ])
                                let status = try await noisy.pushRaw(unique).status
                                if status == 429 { refused.finish() }
                                return status
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
                for _ in 0..<12_000 where refused.count < mustRefuse { try await Task.sleep(for: .milliseconds(10)) }
                return burst
            }
            let answers = try await statuses.value
            #expect(answers.count == 50)
            #expect(answers.allSatisfy { $0 == 200 || $0 == 429 }, "\(answers)")
            #expect(answers.filter { $0 == 200 }.count >= 1)
            #expect(answers.filter { $0 == 429 }.count >= mustRefuse)
        }
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
}

/// Writers that have pushed all their batches (or requests answered: a count shared by tasks).
final class FinishedWriters: Sendable {
    private let value = Atomic<Int>(0)
    var count: Int { value.load(ordering: .relaxed) }
    func finish() { value.add(1, ordering: .relaxed) }
}

/// A one-way flag shared between tasks.
final class Flag: Sendable {
    private let state = Mutex(false)
    var value: Bool { state.withLock { $0 } }
    func set() { state.withLock { $0 = true } }
}
