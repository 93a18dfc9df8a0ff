import Crypto
import Foundation
import HabitSyncAuth
import HabitSyncDomain
import HabitSyncServer
import HabitSyncStore
import LibPQClient
import SyncTestSupport
import TestSupport
import Testing

@Suite struct IdempotencyTests {
    @Test func aRetriedBatchGetsTheFirstResponseByteForByteAndAppliesOnce() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let device = try await world.client(server, user: "alice")
            let batch = UUID()
            let changes = [
                Wire.change("habits", UUID(), at: Wire.at(0), record: Wire.habit()),
                Wire.change("xpTransactions", UUID(), at: Wire.at(0), record: Wire.xp()),
                Wire.change("habits", UUID(), at: Wire.at(0), record: ["name": ""]),
            ]
            let body = try JSONSerialization.data(withJSONObject: ["batchId": batch.uuidString, "changes": changes])
            let first = try await device.pushRaw(body)
            let second = try await device.pushRaw(body)
            #expect(first.status == 200)
            #expect(second.status == 200)
            #expect(first.body == second.body)
            #expect(try await world.count("habits") == 1)
            #expect(try await world.count("xp_transactions") == 1)
            #expect(try await world.count("conflict_log") == 1)
            #expect(try await world.count("push_batches") == 1)
            // Another device may reuse the id: batches are per device.
            #expect(try await device.withDevice("ipad").pushRaw(body).status == 200)

            // Same id, other content: 409, nothing applied.
            let other = try JSONSerialization.data(withJSONObject: ["batchId": batch.uuidString, "changes": [Wire.change("habits", UUID(), at: Wire.at(1), record: Wire.habit())]])
            let conflict = try await device.pushRaw(other)
            #expect(conflict.status == 409)
            #expect((conflict.json["error"] as? JSON)?["code"] as? String == "batch_conflict")
            #expect(try await world.count("habits") == 1)
        }
    }

    @Test func aBatchWhoseTransactionFailsPartWayLeavesNothingBehind() async throws {
        let world = try await SyncWorld.make()
        // Make the last collection of the batch fail inside PostgreSQL, after habits were written.
        try await world.database.withPool(size: 1) { pool in
            try await pool.withConnection { connection in
                // Citus takes triggers on distributed tables only when told to.
                if TestPostgres.onCitus { try await connection.simpleQuery(unsafeSQL: "SET citus.enable_unsafe_triggers = on") }
                // One command at a time: Citus sends each on to the workers as it is.
                try await connection.simpleQuery(unsafeSQL: "CREATE FUNCTION test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by test'; END $$")
                try await connection.simpleQuery(unsafeSQL: "CREATE TRIGGER test_refuse BEFORE INSERT ON selected_apps FOR EACH ROW EXECUTE FUNCTION test_refuse()")
            }
        }
        try await world.serve { server in
            let device = try await world.client(server, user: "alice")
            let batch = UUID()
            let changes = [
                Wire.change("habits", UUID(), at: Wire.at(0), record: Wire.habit()),
                Wire.change("selectedApps", UUID(), at: Wire.at(0), record: Wire.selectedApp()),
            ]
            let failed = try await device.push(changes, batchID: batch, allowUnavailable: true)
            #expect(failed.status == 503)
            #expect((failed.json["error"] as? JSON)?["code"] as? String == "unavailable")
            #expect(try await world.count("habits") == 0)
            #expect(try await world.count("push_batches") == 0)
            #expect(try await world.count("conflict_log") == 0)
            #expect(try await world.count("users", where: "change_counter > 0") == 0)

            try await world.database.withPool(size: 1) { pool in
                try await pool.withConnection { connection in
                    if TestPostgres.onCitus { try await connection.simpleQuery(unsafeSQL: "SET citus.enable_unsafe_triggers = on") }
                    try await connection.simpleQuery(unsafeSQL: "DROP TRIGGER test_refuse ON selected_apps")
                }
            }
            let retried = try await device.push(changes, batchID: batch)
            #expect(retried.status == 200)
            #expect(retried.results.allSatisfy { $0["status"] as? String == "applied" })
            #expect(try await world.count("habits") == 1)
        }
    }

    /// Pushes through the store the server calls, without HTTP; the per-change results of a 200.
    /// Counted on a pool of one connection that nothing else uses (the server's pool also
    /// reloads tenant keys now and then, which moved a pool-wide count under load), through
    /// the same PushStore the server calls.
    @Test func aFiveHundredChangeMixedBatchCostsAConstantNumberOfRoundTrips() async throws {
        let world = try await SyncWorld.make()
        try await world.database.withPool(size: 1, role: "habitsync_app") { pool in
            let store = PushStore(pool: pool, statementTimeout: ServerConfiguration.forTests.statementTimeout)
            let identity = VerifiedIdentity.trusted(tenantID: world.tenant, userID: "alice")
            func mixedBatch(_ size: Int, offset: Double) -> [JSON] {
                let habits = (0..<max(1, size / 5)).map { _ in UUID() }
                var changes: [JSON] = habits.map { Wire.change("habits", $0, at: Wire.at(offset), record: Wire.habit()) }
                var day = 0
                while changes.count < size {
                    let habit = habits[changes.count % habits.count]
                    day += 1
                    switch changes.count % 4 {
                    case 0:
                        changes.append(
                            Wire.change(
                                "dailyProgress", UUID(), at: Wire.at(offset + 1), record: Wire.progress(habit: habit, date: String(format: "2026-%02d-%02d", 1 + day % 12, 1 + day % 28), count: day)))
                    case 1: changes.append(Wire.change("usageEvents", UUID(), at: Wire.at(offset + 1), record: Wire.usageEvent()))
                    case 2: changes.append(Wire.change("reminders", UUID(), at: Wire.at(offset + 1), record: Wire.reminder(habit: habit)))
                    default: changes.append(Wire.change("xpTransactions", UUID(), at: Wire.at(offset + 1), record: Wire.xp()))
                    }
                }
                return changes
            }
            func push(_ changes: [JSON]) async throws -> [JSON] { try await StorePush.results(changes, through: store, as: identity) }
            // Warm the connection and the time-zone catalog so that neither is counted.
            _ = try await push(mixedBatch(10, offset: 0))
            var costs: [Int: Int] = [:]
            for size in [50, 500] {
                let before = pool.roundTrips.count
                let results = try await push(mixedBatch(size, offset: Double(size)))
                costs[size] = pool.roundTrips.count - before
                #expect(results.count == size)
                #expect(results.allSatisfy { $0["status"] as? String == "applied" })
            }
            print("round trips per push: 50 changes → \(costs[50] ?? -1), 500 changes → \(costs[500] ?? -1)")
            #expect(costs[500] == costs[50], "the cost of a batch must not grow with its size")
            #expect((costs[500] ?? .max) <= 30)
        }
    }

    /// The same, per collection mix, and for a batch the server already holds (every change
    /// unchanged, so every row is read back): reported, and constant in the batch's size.
    @Test func everyCollectionMixCostsAConstantNumberOfRoundTrips() async throws {
        let world = try await SyncWorld.make()
        try await world.database.withPool(size: 1, role: "habitsync_app") { pool in
            let store = PushStore(pool: pool, statementTimeout: ServerConfiguration.forTests.statementTimeout)
            let identity = VerifiedIdentity.trusted(tenantID: world.tenant, userID: "bob")
            func push(_ changes: [JSON]) async throws -> [JSON] { try await StorePush.results(changes, through: store, as: identity) }
            let habit = UUID()
            _ = try await push([Wire.change("habits", habit, at: Wire.at(0), record: Wire.habit())])
            let mixes: [(name: String, make: (Int, Int) -> [JSON])] = [
                ("habits", { size, round in (0..<size).map { _ in Wire.change("habits", UUID(), at: Wire.at(Double(round)), record: Wire.habit()) } }),
                (
                    "dailyProgress",
                    { size, round in
                        (0..<size).map { n in
                            Wire.change("dailyProgress", UUID(), at: Wire.at(Double(round)), record: Wire.progress(habit: habit, date: LocalDate(dayNumber: 19_000 + round * 1_000 + n).description))
                        }
                    }
                ),
                ("usageEvents", { size, round in (0..<size).map { _ in Wire.change("usageEvents", UUID(), at: Wire.at(Double(round)), record: Wire.usageEvent()) } }),
                (
                    "usageEvents without exits",
                    { size, round in
                        (0..<size).map { _ in
                            Wire.change("usageEvents", UUID(), at: Wire.at(Double(round)), record: ["eventType": "deepen_pause", "timestamp": Wire.at(0), "pauseDuration": 5, "timerDuration": 30])
                        }
                    }
                ),
                ("xpTransactions", { size, round in (0..<size).map { _ in Wire.change("xpTransactions", UUID(), at: Wire.at(Double(round)), record: Wire.xp()) } }),
            ]
            var lines: [String] = []
            var costsByMix: [String: Int] = [:]
            for (index, mix) in mixes.enumerated() {
                var costs: [Int: Int] = [:]
                var repeats: [Int: Int] = [:]
                // A first small batch of the mix, so that the derived records it changes
                // (a first exit starts the usage streak) are written before the counting.
                _ = try await push(mix.make(5, index * 10))
                for size in [50, 500] {
                    let changes = mix.make(size, index * 10 + (size == 50 ? 1 : 2))
                    let before = pool.roundTrips.count
                    let results = try await push(changes)
                    costs[size] = pool.roundTrips.count - before
                    #expect(results.allSatisfy { $0["status"] as? String == "applied" }, "\(mix.name)")
                    // The same changes in a new batch: nothing is written, every row is read back.
                    let again = pool.roundTrips.count
                    let repeated = try await push(changes)
                    repeats[size] = pool.roundTrips.count - again
                    #expect(repeated.allSatisfy { $0["status"] as? String == "unchanged" }, "\(mix.name)")
                }
                costsByMix[mix.name] = costs[50]
                lines.append("\(mix.name): \(costs[50] ?? -1) (50) / \(costs[500] ?? -1) (500), again unchanged \(repeats[50] ?? -1) / \(repeats[500] ?? -1)")
                #expect(costs[50] == costs[500] && repeats[50] == repeats[500], "\(mix.name): the cost of a batch must not grow with its size")
            }
            print("round trips per push by collection mix: " + lines.joined(separator: "; "))
            // Events that are not exits feed no derived record: their pushes skip the recompute.
            #expect((costsByMix["usageEvents without exits"] ?? .max) < (costsByMix["usageEvents"] ?? 0))
        }
    }
}
