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

/// Daily progress merges as a counter (protocol 2's `increment`), through HTTP and PostgreSQL:
/// concurrent additions add up, a replayed batch counts once, a set absorbs exactly the
/// additions made before it, and a version the server does not speak changes nothing.
@Suite struct ProgressCounterSyncTests {
    static var today: LocalDate { LocalDate(Date(), in: TimeZone(identifier: "UTC") ?? .current) }

    /// A v2 push of `changes`.
    static func body(_ changes: [JSON], batchID: UUID = UUID(), version: Int? = 2) throws -> Data {
        var envelope: JSON = ["batchId": batchID.uuidString, "changes": changes]
        if let version { envelope["protocolVersion"] = version }
        return try JSONSerialization.data(withJSONObject: envelope)
    }

    static func addition(_ habit: UUID, id: UUID = UUID(), at time: Double, by delta: Int, count: Int = 1, date: String? = nil) -> JSON {
        var change = Wire.change(
            "dailyProgress", id, at: Wire.at(time),
            record: [
                "habitId": habit.uuidString, "date": date ?? today.description, "progressCount": count, "goalCount": 1,
            ])
        change["increment"] = delta
        return change
    }

    static func set(_ habit: UUID, id: UUID = UUID(), at time: Double, to count: Int) -> JSON {
        Wire.change("dailyProgress", id, at: Wire.at(time), record: ["habitId": habit.uuidString, "date": today.description, "progressCount": count, "goalCount": 1])
    }

    static func day(_ device: SyncClient) async throws -> JSON? {
        let progress = try await device.state().values.filter { $0["collection"] as? String == "dailyProgress" && $0["op"] as? String == "upsert" }
        #expect(progress.count <= 1, "one record per habit and day")
        return progress.first?["record"] as? JSON
    }

    static func habit(_ device: SyncClient) async throws -> UUID {
        let habit = UUID()
        let record = Wire.habit().merging(["goalCount": 1, "startDate": today.adding(days: -3).description]) { _, new in new }
        #expect(try await device.push([Wire.change("habits", habit, at: Wire.at(0), record: record)]).status(0) == "applied")
        return habit
    }

    @Test func twoDevicesOfflineCompletionsAddUpAndAReplayCountsOnce() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let phone = try await world.client(server, user: "ada", device: "phone")
            let watch = phone.withDevice("watch")
            let habit = try await Self.habit(phone)
            let first = try await phone.pushRaw(try Self.body([Self.addition(habit, at: 10, by: 1)]))
            #expect(first.status(0) == "applied")
            let xpAfterOne = try await world.count("xp_transactions")
            // Both saw 1; each adds one offline. The watch's (later) reaches the server first.
            #expect(try await watch.pushRaw(try Self.body([Self.addition(habit, at: 61, by: 1, count: 2)])).status(0) == "applied")
            let phoneBatch = UUID()
            let phoneBody = try Self.body([Self.addition(habit, at: 60, by: 1, count: 2)], batchID: phoneBatch)
            let phoneReply = try await phone.pushRaw(phoneBody)
            #expect(phoneReply.status(0) == "applied")
            #expect(phoneReply.result(0)["canonicalId"] as? String != nil, "the phone's new id is mapped to the day the server keeps")
            #expect(try await Self.day(phone)?["progressCount"] as? Int == 3)
            // The answer was lost; the phone sends the same batch again.
            let replay = try await phone.pushRaw(phoneBody)
            #expect(replay.body == phoneReply.body)
            #expect(try await Self.day(watch)?["progressCount"] as? Int == 3)
            // Analysts read one merged count; no conflict was logged; the day's XP once.
            #expect(try await world.count("daily_progress", where: "progress_count = 3 AND deleted_at IS NULL") == 1)
            #expect(try await world.count("daily_progress_additions") == 3)
            #expect(try await world.count("conflict_log", where: "collection = 'dailyProgress'") == 0)
            #expect(try await world.count("xp_transactions") == xpAfterOne)
        }
    }

    /// The server remembers a batch's answer for a while (`--push-batch-retention`); a device
    /// that sends its batch again after that must still not count a completion twice.
    @Test func aBatchSentAgainAfterItsAnswerWasPurgedCountsOnce() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let phone = try await world.client(server, user: "ada", device: "phone")
            let habit = try await Self.habit(phone)
            let body = try Self.body([Self.addition(habit, at: 10, by: 1), Self.addition(habit, at: 11, by: 2, count: 3)])
            #expect(try await phone.pushRaw(body).status(1) == "applied")
            _ = try await world.database.withPool(size: 1) { pool in
                try await pool.withConnection { try await $0.query("DELETE FROM push_batches") }
            }
            let again = try await phone.pushRaw(body)
            #expect(again.status(0) == "applied" && again.status(1) == "applied", "applied anew: the server no longer knew the batch")
            #expect(try await Self.day(phone)?["progressCount"] as? Int == 3)
            #expect(try await world.count("daily_progress_additions") == 2)
        }
    }

    @Test func aSetAbsorbsTheAdditionsMadeBeforeItAndNotThoseAfter() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let phone = try await world.client(server, user: "ada", device: "phone")
            let watch = phone.withDevice("watch")
            let habit = try await Self.habit(phone)
            _ = try await phone.pushRaw(try Self.body([Self.addition(habit, at: 10, by: 1)]))
            _ = try await watch.pushRaw(try Self.body([Self.addition(habit, at: 20, by: 2, count: 3)]))
            // An old app sets 5 at 30 (a whole-record upsert, no protocol version).
            #expect(try await phone.push([Self.set(habit, at: 30, to: 5)]).status(0) == "applied")
            #expect(try await Self.day(phone)?["progressCount"] as? Int == 5)
            #expect(try await world.count("daily_progress_additions") == 0, "the set covers both additions: they are forgotten")
            // The watch added one at 40, unseen by the set: it counts. One made at 25 does not.
            _ = try await watch.pushRaw(try Self.body([Self.addition(habit, at: 40, by: 1, count: 6)]))
            let late = try await watch.pushRaw(try Self.body([Self.addition(habit, at: 25, by: 1, count: 4)]))
            #expect(late.status(0) == "applied")
            #expect(try await Self.day(watch)?["progressCount"] as? Int == 6)
            // An older set loses whole and is logged.
            let older = try await watch.push([Self.set(habit, at: 28, to: 9)])
            #expect(older.status(0) == "superseded")
            #expect(try await Self.day(watch)?["progressCount"] as? Int == 6)
            #expect(try await world.count("conflict_log", where: "collection = 'dailyProgress' AND outcome = 'superseded'") == 1)
            // Taking away never goes below zero.
            _ = try await phone.pushRaw(try Self.body([Self.addition(habit, at: 50, by: -1000, count: 0)]))
            #expect(try await Self.day(phone)?["progressCount"] as? Int == 0)
        }
    }

    @Test func aDeleteSetsZeroAndALaterAdditionBringsTheDayBack() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let phone = try await world.client(server, user: "ada", device: "phone")
            let habit = try await Self.habit(phone)
            let id = UUID()
            _ = try await phone.pushRaw(try Self.body([Self.addition(habit, id: id, at: 10, by: 2, count: 2)]))
            #expect(try await phone.push([Wire.change("dailyProgress", id, at: Wire.at(20), record: nil)]).status(0) == "applied")
            #expect(try await Self.day(phone) == nil)
            let early = try await phone.pushRaw(try Self.body([Self.addition(habit, id: id, at: 15, by: 1, count: 3)]))
            #expect(early.status(0) == "superseded", "the later delete stands")
            #expect(try await Self.day(phone) == nil)
            _ = try await phone.pushRaw(try Self.body([Self.addition(habit, id: id, at: 30, by: 1, count: 1)]))
            #expect(try await Self.day(phone)?["progressCount"] as? Int == 1, "only what was added after the delete")
        }
    }

    @Test func aVersionTheServerDoesNotSpeakChangesNothingAndIncrementsAreChecked() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let phone = try await world.client(server, user: "ada", device: "phone")
            let habit = try await Self.habit(phone)
            for version: Any in [3, 0, 2.5, "2", 1e308] {
                let body = try JSONSerialization.data(withJSONObject: [
                    "batchId": UUID().uuidString, "protocolVersion": version,
                    "changes": [Self.addition(habit, at: 10, by: 1)],
                ])
                let reply = try await phone.pushRaw(body)
                #expect(reply.status == 400, "\(version)")
                let error = reply.json["error"] as? JSON
                #expect(error?["field"] as? String == "protocolVersion")
                if "\(version)" == "3" || "\(version)" == "0" { #expect(error?["code"] as? String == "unsupported_protocol_version") }
            }
            #expect(try await world.count("daily_progress") == 0, "nothing of those batches was applied")

            // Bad increments are rejected one by one; the rest of the batch is stored.
            var bad: [JSON] = []
            for value: Any in [1001, -1001, 1.5, "1", 1e308, NSNull()] { bad.append(Self.addition(habit, at: 10, by: 1).merging(["increment": value]) { _, new in new }) }
            bad.append(Wire.change("habits", UUID(), at: Wire.at(1), record: Wire.habit()).merging(["increment": 1]) { _, new in new })
            bad.append(Wire.change("dailyProgress", UUID(), at: Wire.at(1), record: nil).merging(["increment": 1]) { _, new in new })
            let reply = try await phone.pushRaw(try Self.body(bad + [Self.addition(habit, at: 11, by: 1)]))
            for index in bad.indices {
                #expect(reply.status(index) == "rejected" && reply.errorCode(index) == "invalid_field", "change \(index)")
                #expect((reply.result(index)["error"] as? JSON)?["field"] as? String == "increment")
            }
            #expect(reply.status(bad.count) == "applied")
            // Without protocol version 2, increment is not a field of a change.
            let old = try await phone.push([Self.addition(habit, at: 12, by: 1)])
            #expect(old.errorCode(0) == "unknown_field")
            #expect(try await Self.day(phone)?["progressCount"] as? Int == 1)
        }
    }

    /// Swift's range for `increment` and the additions table's CHECK agree: every edge value is
    /// either stored as sent or rejected by Swift naming the field, never refused by PostgreSQL.
    @Test func incrementEdgeValuesAreStoredOrRejectedAlikeBySwiftAndPostgreSQL() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let phone = try await world.client(server, user: "ada", device: "phone")
            let habit = try await Self.habit(phone)
            let values = ValidationParityTests.edgeNumbers + [999, 1000, 1001, -999, -1000, -1001, 0.5, -0.0]
            let changes = values.enumerated().map { index, value in
                Self.addition(habit, at: 10, by: 1, date: LocalDate(dayNumber: 19_000 + index).description).merging(["increment": value]) { _, new in new }
            }
            let reply = try await phone.pushRaw(try Self.body(changes))
            var stored = 0
            for (index, value) in values.enumerated() {
                let swift = Result {
                    guard case .object(let fields) = try JSONParser.parse(try JSONSerialization.data(withJSONObject: changes[index])) else { throw ChangeRejection(.invalidField, "not an object") }
                    return try PushChange.validate(fields, index: 0, context: .init(now: Date(), maximumSkew: 300, timeZones: .foundation, protocolVersion: 2))
                }
                switch swift {
                case .success:
                    #expect(reply.status(index) == "applied", "\(value): \(reply.result(index))")
                    stored += 1
                case .failure:
                    #expect(reply.status(index) == "rejected" && reply.errorCode(index) == "invalid_field", "\(value)")
                }
            }
            #expect(try await world.count("daily_progress_additions") == stored)
            #expect(try await world.count("conflict_log", where: "error_code = 'refused_by_database'") == 0)
        }
    }

    /// Found by the fuzzer: a delete of a progress id the server never saw leaves a tombstone
    /// without a natural key, and the next progress push failed decoding it (500).
    @Test func aTombstoneOfAnUnknownProgressIdDoesNotBreakLaterPushes() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let device = try await world.client(server, user: "alice")
            let habit = UUID(), unknown = UUID()
            _ = try await device.push([
                Wire.change("habits", habit, at: Wire.at(0), record: Wire.habit()),
                Wire.change("dailyProgress", unknown, at: Wire.at(0), record: nil),
            ])
            let reply = try await device.push([
                Wire.change("dailyProgress", unknown, at: Wire.at(1), record: Wire.progress(habit: habit)),
                Wire.change("dailyProgress", UUID(), at: Wire.at(2), record: Wire.progress(habit: habit, date: Wire.day(-1))),
            ])
            #expect(reply.status == 200)
            #expect(reply.status(0) == "applied" && reply.status(1) == "applied", "\(reply.results)")
        }
    }
}
