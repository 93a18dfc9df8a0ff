import Foundation
import HabitSyncDomain
import ServerHarness

/// Two server processes on one database, each user's devices spread across them, all editing
/// the same habits and the same days at once: once everyone has pulled, every device of a
/// user holds the same state, and it equals a fresh sync through either replica.
enum TwoReplicas {
    static let name = "two replicas, devices spread across them"
    static let sharedHabits = 5

    /// A device's local store, built only from what it pulled: "collection/id" → the record's
    /// version, LWW key and content.
    struct LocalState: Equatable {
        var records: [String: String] = [:]
        var cursor: String?

        /// Applies one pull page; returns whether there is more.
        mutating func apply(_ page: [String: Any]) -> Bool {
            for change in page["changes"] as? [[String: Any]] ?? [] {
                let key = "\(change["collection"] ?? "")/\(change["id"] ?? "")"
                if change["op"] as? String == "delete" {
                    records.removeValue(forKey: key)
                } else {
                    let record = (try? JSONSerialization.data(withJSONObject: change["record"] ?? [:], options: [.sortedKeys])).map { String(decoding: $0, as: UTF8.self) } ?? ""
                    records[key] = "\(change["serverVersion"] ?? "")|\(change["updatedAt"] ?? "")|\(change["updatedBy"] ?? "")|\(record)"
                }
            }
            cursor = page["cursor"] as? String ?? cursor
            return page["hasMore"] as? Bool ?? false
        }

        static func == (lhs: LocalState, rhs: LocalState) -> Bool { lhs.records == rhs.records }
    }

    struct Tally: Sendable {
        var pushes = [0, 0]  // per replica
        var failures = 0
        var results: [String: Int] = [:]
        var canonicalIDs = 0
        var pulls = 0
    }

    static func run(_ environment: FaultEnvironment, scale: FaultScale) async throws -> FaultReport {
        var report = FaultReport(scenario: name)
        let replicas = [try await environment.startServer(name: "replica-a"), try await environment.startServer(name: "replica-b")]
        try await environment.holdIfAsked("two replicas")
        let base = Date().addingTimeInterval(-86_400)

        var users: [(user: String, habits: [UUID], devices: [DeviceClient])] = []
        for u in 0..<scale.replicaUsers {
            let user = "replica-user-\(u)"
            var devices: [DeviceClient] = []
            for d in 0..<scale.devicesPerUser {
                devices.append(try await environment.client(user: user, device: "device-\(u)-\(d)", baseURL: replicas[d % 2].baseURL))
            }
            let habits = (0..<sharedHabits).map { _ in UUID() }
            let setup = try await devices[0].push(batch(habits: habits, edits: Array(0..<sharedHabits), progress: 0, events: 0, deleting: nil, at: { base }))
            guard setup.status == 200 else { throw HarnessError("setup push answered \(setup.status)") }
            users.append((user, habits, devices))
        }

        // Every device pushes and pulls its rounds concurrently with all the others.
        let outcomes = await withTaskGroup(of: (user: Int, device: Int, state: LocalState, tally: Tally).self) { group in
            for (u, entry) in users.enumerated() {
                for (d, client) in entry.devices.enumerated() {
                    group.addTask {
                        var state = LocalState()
                        var tally = Tally()
                        var random = SystemRandomNumberGenerator()
                        for round in 0..<scale.replicaRounds {
                            let edits = Array((0..<sharedHabits).shuffled(using: &random).prefix(2))
                            let deleting = (d == 1 && round == scale.replicaRounds / 2) ? sharedHabits - 1 : nil
                            let body = batch(
                                habits: entry.habits, edits: edits, progress: 3, events: 3, deleting: deleting,
                                at: {
                                    base.addingTimeInterval(Double(round) + Double(Int.random(in: 0..<1000, using: &random)) / 1000)
                                })
                            if let reply = try? await client.push(body), reply.status == 200 {
                                tally.pushes[d % 2] += 1
                                for result in (try? reply.json())?["results"] as? [[String: Any]] ?? [] {
                                    tally.results[result["status"] as? String ?? "?", default: 0] += 1
                                    if result["canonicalId"] != nil { tally.canonicalIDs += 1 }
                                }
                            } else {
                                tally.failures += 1
                            }
                            tally.failures += await pull(client, into: &state, pageSize: 50, pulls: &tally.pulls) ? 0 : 1
                        }
                        return (u, d, state, tally)
                    }
                }
            }
            return await group.reduce(into: [(user: Int, device: Int, state: LocalState, tally: Tally)]()) { $0.append($1) }
        }

        // Everyone has stopped writing: each device catches up once more, as it would on its next sync.
        var total = Tally()
        var converged = 0
        var disagreements: [String] = []
        for (u, entry) in users.enumerated() {
            var states: [LocalState] = []
            for outcome in outcomes where outcome.user == u {
                var state = outcome.state
                total.failures += outcome.tally.failures + (await pull(entry.devices[outcome.device], into: &state, pageSize: 500, pulls: &total.pulls) ? 0 : 1)
                states.append(state)
                total.pushes[0] += outcome.tally.pushes[0]
                total.pushes[1] += outcome.tally.pushes[1]
                total.canonicalIDs += outcome.tally.canonicalIDs
                total.pulls += outcome.tally.pulls
                total.results.merge(outcome.tally.results, uniquingKeysWith: +)
            }
            // A fresh initial sync through each replica: the server's state for the user.
            var fresh: [LocalState] = []
            for replica in replicas {
                let client = try await environment.client(user: entry.user, device: "fresh", baseURL: replica.baseURL)
                var state = LocalState()
                total.failures += await pull(client, into: &state, pageSize: 500, pulls: &total.pulls) ? 0 : 1
                fresh.append(state)
            }
            let agreeing = states.count { $0 == fresh[0] }
            converged += agreeing
            if agreeing != states.count || fresh[0] != fresh[1] {
                disagreements.append("\(entry.user): \(agreeing) of \(states.count) devices match; replicas agree: \(fresh[0] == fresh[1])")
            }
            report.count("records held by \(entry.user)'s devices", fresh[0].records.count)
        }

        let deviceCount = scale.replicaUsers * scale.devicesPerUser
        report.check(total.failures == 0, "every push and pull was answered 200 (\(total.failures) were not)")
        report.check(total.pushes[0] > 0 && total.pushes[1] > 0, "both replicas served pushes (\(total.pushes[0]) and \(total.pushes[1]))")
        report.check(
            (total.results["superseded"] ?? 0) > 0 && total.canonicalIDs > 0,
            "devices really conflicted: \(total.results["superseded"] ?? 0) superseded writes, \(total.canonicalIDs) progress records merged into another device's id")
        report.check(
            converged == deviceCount && disagreements.isEmpty,
            "every device converged on the state a fresh sync through either replica returns (\(converged) of \(deviceCount) devices)"
                + (disagreements.isEmpty ? "" : ": " + disagreements.joined(separator: "; ")))

        report.count("devices", deviceCount)
        report.count("pushes via replica A", total.pushes[0])
        report.count("pushes via replica B", total.pushes[1])
        for (status, count) in total.results.sorted(by: { $0.key < $1.key }) { report.count("changes \(status)", count) }
        report.count("pulls", total.pulls)
        return report
    }

    /// Pulls until `hasMore` is false; false if a page was not answered 200.
    static func pull(_ client: DeviceClient, into state: inout LocalState, pageSize: Int, pulls: inout Int) async -> Bool {
        while true {
            pulls += 1
            guard let reply = try? await client.pull(cursor: state.cursor, limit: pageSize), reply.status == 200 else { return false }
            if !state.apply((try? reply.json()) ?? [:]) { return true }
        }
    }

    /// Edits of some shared habits, new progress on the shared days (so devices create the same
    /// (habit, day) under different ids), usage events, and perhaps a habit's deletion.
    static func batch(habits: [UUID], edits: [Int], progress: Int, events: Int, deleting: Int?, at time: () -> Date) -> Data {
        var changes: [[String: Any]] = []
        for habit in edits {
            changes.append([
                "collection": "habits", "op": "upsert", "id": habits[habit].uuidString, "updatedAt": WireTime.format(time()),
                "record": [
                    "name": "Habit \(habit) v\(Int.random(in: 0..<1_000_000))", "habitType": "formation", "goalCount": 2,
                    "goalUnit": "times", "schedule": ["type": "daily"], "startDate": "2026-06-01",
                ],
            ])
        }
        for _ in 0..<progress {
            let habit = habits[Int.random(in: 0..<(habits.count - 1))]  // the last habit may be deleted
            changes.append([
                "collection": "dailyProgress", "op": "upsert", "id": UUID().uuidString, "updatedAt": WireTime.format(time()),
                "record": [
                    "habitId": habit.uuidString, "date": "2026-06-0\(1 + Int.random(in: 0..<5))",
                    "progressCount": Int.random(in: 0..<3), "goalCount": 2,
                ],
            ])
        }
        for n in 0..<events {
            changes.append([
                "collection": "usageEvents", "op": "upsert", "id": UUID().uuidString, "updatedAt": WireTime.format(time()),
                "record": ["eventType": "exit_to_focus", "timestamp": WireTime.format(time()), "pauseDuration": n, "timerDuration": 30],
            ])
        }
        if let deleting {
            changes.append(["collection": "habits", "op": "delete", "id": habits[deleting].uuidString, "updatedAt": WireTime.format(time())])
        }
        return try! JSONSerialization.data(withJSONObject: ["batchId": UUID().uuidString, "changes": changes])
    }
}
