import Foundation
import LibPQClient
import Synchronization
import Testing
import TestSupport

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
                                    changes.append(Wire.change("dailyProgress", UUID(), at: time, record: Wire.progress(habit: habits.randomElement()!, date: String(format: "2026-10-%02d", 1 + (batch * 7 + n) % 28), count: batch)))
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
                    try await connection.query("""
                        SELECT 'habits/' || id AS key, server_version, deleted_at IS NOT NULL AS deleted FROM habits
                        UNION ALL SELECT 'selectedApps/' || id, server_version, deleted_at IS NOT NULL FROM selected_apps
                        UNION ALL SELECT 'dailyProgress/' || id, server_version, deleted_at IS NOT NULL FROM daily_progress
                        UNION ALL SELECT 'usageEvents/' || id, server_version, false FROM usage_events
                        UNION ALL SELECT 'xpTransactions/' || id, server_version, false FROM xp_transactions
                        UNION ALL SELECT 'globalStreak/' || id, server_version, false FROM global_streaks
                        UNION ALL SELECT 'userProgress/' || id, server_version, false FROM user_progress
                        UNION ALL SELECT 'usageStreak/' || id, server_version, false FROM usage_streaks
                        """).rows.map { row in
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
}

/// Writers that have pushed all their batches.
final class FinishedWriters: Sendable {
    private let value = Atomic<Int>(0)
    var count: Int { value.load(ordering: .relaxed) }
    func finish() { value.add(1, ordering: .relaxed) }
}
