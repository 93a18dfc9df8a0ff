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

/// The LWW rules of protocol.md, table-driven over every LWW collection, through HTTP.
@Suite struct LastWriterWinsTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let collection: String
        let needsHabit: Bool
        /// A distinguishing field and its value for variant v.
        let field: String
        let value: @Sendable (Int) -> (any Sendable)
        let record: @Sendable (Int, UUID) -> JSON

        var testDescription: String { collection }
    }

    static let cases: [Case] = [
        Case(collection: "habits", needsHabit: false, field: "name", value: { "v\($0)" }, record: { v, _ in Wire.habit(name: "v\(v)") }),
        Case(
            collection: "reminders", needsHabit: true, field: "time", value: { String(format: "%02d:00", $0) },
            record: { v, habit in Wire.reminder(habit: habit, time: String(format: "%02d:00", v)) }),
        Case(
            collection: "dailyProgress", needsHabit: true, field: "progressCount", value: { $0 },
            record: { v, habit in Wire.progress(habit: habit, count: v) }),
        Case(
            collection: "focusSessions", needsHabit: false, field: "duration", value: { $0 },
            record: { v, _ in Wire.focus(state: "completed", duration: Double(v)) }),
        Case(collection: "selectedApps", needsHabit: false, field: "orderIndex", value: { $0 }, record: { v, _ in Wire.selectedApp(order: v) }),
        Case(
            collection: "userSettings", needsHabit: false, field: "gatewayTimerDuration", value: { 20 + $0 },
            record: { v, _ in Wire.settings(timer: 20 + v) }),
    ]

    @Test(arguments: cases)
    func lastWriterWinsPerCollection(_ testCase: Case) async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let deviceA = try await world.client(server, user: "alice", device: "dev-A")
            let deviceB = deviceA.withDevice("dev-B")
            let habit = UUID()
            if testCase.needsHabit {
                #expect(try await deviceA.push([Wire.change("habits", habit, at: Wire.at(0), record: Wire.habit())]).status(0) == "applied")
            }
            let id = UUID()
            func upsert(_ v: Int, at time: Double, by client: SyncClient? = nil) async throws -> SyncClient.PushReply {
                try await (client ?? deviceA).push([Wire.change(testCase.collection, id, at: Wire.at(time), record: testCase.record(v, habit))])
            }
            func storedValue() async throws -> JSON? {
                let state = try await deviceA.state().values.filter { $0["collection"] as? String == testCase.collection }
                return state.first
            }

            // Newer wins.
            #expect(try await upsert(1, at: 10).status(0) == "applied")
            let second = try await upsert(2, at: 20)
            #expect(second.status(0) == "applied")
            let version = second.result(0)["serverVersion"] as? Int
            #expect(version != nil)
            #expect("\(((try await storedValue())?["record"] as? JSON)?[testCase.field] ?? "")" == "\(testCase.value(2))")

            // Older is superseded, with the winning change as `current`.
            let older = try await upsert(3, at: 15)
            #expect(older.status(0) == "superseded")
            let current = older.result(0)["current"] as? JSON
            #expect(current?["updatedAt"] as? String == Wire.at(20))
            #expect("\((current?["record"] as? JSON)?[testCase.field] ?? "")" == "\(testCase.value(2))")

            // The same write again is unchanged, with the stored version.
            let again = try await upsert(2, at: 20)
            #expect(again.status(0) == "unchanged")
            #expect(again.result(0)["serverVersion"] as? Int == version)

            // Equal timestamps: the greater device id (as bytes) wins.
            #expect(try await upsert(4, at: 20, by: deviceB).status(0) == "applied")
            #expect(try await upsert(5, at: 20, by: deviceA).status(0) == "superseded")
            #expect("\(((try await storedValue())?["record"] as? JSON)?[testCase.field] ?? "")" == "\(testCase.value(4))")

            // A delete beats an older upsert and loses to a newer one.
            let delete = try await deviceA.push([Wire.change(testCase.collection, id, at: Wire.at(30), record: nil)])
            #expect(delete.status(0) == "applied")
            let stale = try await upsert(6, at: 25)
            #expect(stale.status(0) == "superseded")
            #expect((stale.result(0)["current"] as? JSON)?["op"] as? String == "delete")
            // An initial sync leaves tombstones out; an incremental pull delivers them.
            #expect(try await storedValue() == nil)
            let delta = try await deviceA.pull(cursor: PullCursorText.at(version: version ?? 0))
            #expect(delta.changes.contains { $0["collection"] as? String == testCase.collection && $0["op"] as? String == "delete" })
            #expect(try await upsert(7, at: 40).status(0) == "applied")
            let revived = try await storedValue()
            #expect(revived?["op"] as? String == "upsert")
            #expect("\((revived?["record"] as? JSON)?[testCase.field] ?? "")" == "\(testCase.value(7))")
            // A delete older than that revival loses: superseded, the record kept, and the delete
            // logged whole with the key that beat it (issue 63: it had left no trace).
            let staleDelete = try await deviceA.push([Wire.change(testCase.collection, id, at: Wire.at(35), record: nil)])
            #expect(staleDelete.status(0) == "superseded")
            #expect((staleDelete.result(0)["current"] as? JSON)?["op"] as? String == "upsert")
            #expect(try await storedValue()?["op"] as? String == "upsert")
            let loggedDelete = try await world.count(
                "conflict_log",
                where: """
                    collection = '\(testCase.collection)' AND op = 'delete' AND outcome = 'superseded' AND field IS NULL
                    AND incoming_updated_at = '\(Wire.at(35))' AND winning_updated_at = '\(Wire.at(40))' AND incoming_updated_by = 'dev-A'
                    """)
            #expect(loggedDelete == 1)

            // A clock far ahead is clamped to the server's.
            let future = try await deviceA.push([Wire.change(testCase.collection, id, at: WireTime.format(Date().addingTimeInterval(86_400)), record: testCase.record(8, habit))])
            #expect(future.status(0) == "applied")
            #expect(future.result(0)["clamped"] as? Bool == true)
            let stored = try await storedValue()
            let storedAt = WireTime.parse(stored?["updatedAt"] as? String ?? "")
            #expect(storedAt.map { $0 < Date().addingTimeInterval(300) } == true, "clamped to the server clock")

            // Every superseded change is in the conflict log. Where records merge field by field,
            // by field: the two writes of the field that lost (3, 5); the upsert the delete beat
            // (6) and the delete that lost (at 35) are logged whole.
            let logged = try await world.count("conflict_log", where: "outcome = 'superseded' AND collection = '\(testCase.collection)'")
            #expect(logged == 4)
            if SyncCollection(rawValue: testCase.collection)?.mergesByField == true {
                let byField = try await world.count("conflict_log", where: "collection = '\(testCase.collection)' AND field = '\(testCase.field)'")
                #expect(byField == 2)
                let toOtherDevice = try await world.count(
                    "conflict_log", where: "collection = '\(testCase.collection)' AND field IS NOT NULL AND incoming_updated_by = 'dev-A' AND winning_updated_by = 'dev-B'")
                #expect(toOtherDevice == 1)
            }
        }
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
