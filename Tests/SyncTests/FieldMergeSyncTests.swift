import Foundation
import HabitSyncDomain
import SyncTestSupport
import TestSupport
import Testing

/// Habits, reminders, selected apps and user settings merge field by field (protocol.md,
/// "Merging fields"), through HTTP and PostgreSQL: edits of different fields on two devices
/// both survive in either order, the later write of one field wins and the other is logged by
/// field, a field not sent is never overwritten, and what is invalid changes nothing.
@Suite struct FieldMergeSyncTests {
    /// A protocol 2 change carrying only `fields` (times per field in `fieldTimes`).
    static func edit(_ collection: String, _ id: UUID, at time: Double, _ fields: JSON, fieldTimes: [String: Double] = [:]) -> JSON {
        var change = Wire.change(collection, id, at: Wire.at(time), record: fields)
        if !fieldTimes.isEmpty { change["fieldTimes"] = fieldTimes.mapValues { Wire.at($0) } }
        return change
    }

    static func body(_ changes: [JSON], version: Int? = 2) throws -> Data {
        try ProgressCounterSyncTests.body(changes, version: version)
    }

    /// Ada's phone and watch, and a habit the phone created ("Read", goal 10).
    static func phoneWatchAndHabit(_ world: SyncWorld, _ server: RunningServer) async throws -> (phone: SyncClient, watch: SyncClient, habit: UUID) {
        let phone = try await world.client(server, user: "ada", device: "phone")
        let habit = UUID()
        #expect(try await phone.push([Wire.change("habits", habit, at: Wire.at(0), record: Wire.habit())]).status(0) == "applied")
        return (phone, phone.withDevice("watch"), habit)
    }

    static func record(_ device: SyncClient, _ collection: String, _ id: UUID) async throws -> JSON? {
        try await device.state()["\(collection)/\(id.uuidString.lowercased())"]?["record"] as? JSON
    }

    @Test(arguments: [false, true])
    func aRenameOnThePhoneAndAGoalOnTheWatchBothSurviveInEitherOrder(watchFirst: Bool) async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let (phone, watch, habit) = try await Self.phoneWatchAndHabit(world, server)
            // Both offline: the phone renames (earlier), the watch changes the goal (later).
            let rename = try Self.body([Self.edit("habits", habit, at: 10, ["name": "Read books"])])
            let goal = try Self.body([Self.edit("habits", habit, at: 20, ["goalCount": 30])])
            for (device, body) in watchFirst ? [(watch, goal), (phone, rename)] : [(phone, rename), (watch, goal)] {
                #expect(try await device.pushRaw(body).status(0) == "applied")
            }
            for device in [phone, watch] {
                let merged = try await Self.record(device, "habits", habit)
                #expect(merged?["name"] as? String == "Read books")
                #expect(merged?["goalCount"] as? Int == 30)
                #expect(merged?["goalUnit"] as? String == "pages", "a field nobody sent is kept")
            }
            #expect(try await world.count("conflict_log") == 0, "nothing was in conflict")
            // Analysts read one row; the field set before the record's own key keeps its own.
            #expect(try await world.count("habits", where: "name = 'Read books' AND goal_count = 30") == 1)
            let olderField = watchFirst ? "field_times ? 'name'" : "field_times IS NULL OR NOT field_times ? 'goalCount'"
            #expect(try await world.count("habits", where: olderField) == 1)
        }
    }

    @Test func theLaterWriteOfOneFieldWinsWhateverArrivesFirstAndTheLoserIsLoggedByField() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let (phone, watch, habit) = try await Self.phoneWatchAndHabit(world, server)
            // The watch's rename is later but arrives first, with a goal change.
            #expect(try await watch.pushRaw(try Self.body([Self.edit("habits", habit, at: 20, ["name": "Watch", "goalCount": 5])])).status(0) == "applied")
            // The phone's older rename loses; its icon, a field nobody else touched, is written.
            let phone1 = try await phone.pushRaw(try Self.body([Self.edit("habits", habit, at: 10, ["name": "Phone", "icon": "📚"])]))
            #expect(phone1.status(0) == "applied")
            // An edit whose every field loses is superseded, with the record as it stands.
            let stale = try await phone.pushRaw(try Self.body([Self.edit("habits", habit, at: 15, ["name": "Stale"])]))
            #expect(stale.status(0) == "superseded")
            #expect(((stale.result(0)["current"] as? JSON)?["record"] as? JSON)?["name"] as? String == "Watch")
            let merged = try await Self.record(phone, "habits", habit)
            #expect(merged?["name"] as? String == "Watch")
            #expect(merged?["icon"] as? String == "📚")
            #expect(merged?["goalCount"] as? Int == 5)
            // Each lost write of `name` is logged with its value and both keys; nothing else.
            #expect(try await world.count("conflict_log") == 2)
            #expect(
                try await world.count(
                    "conflict_log",
                    where: """
                        field = 'name' AND incoming_payload = '{"name": "Phone"}' AND incoming_updated_by = 'phone' AND winning_updated_by = 'watch'
                        AND incoming_updated_at = '\(Wire.at(10))' AND winning_updated_at = '\(Wire.at(20))'
                        """) == 1)
            #expect(try await world.count("conflict_log", where: "field = 'name' AND incoming_payload = '{\"name\": \"Stale\"}'") == 1)
        }
    }

    @Test func fieldTimesSettleEachFieldOfOneChangeOnItsOwn() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let (phone, watch, habit) = try await Self.phoneWatchAndHabit(world, server)
            _ = try await watch.pushRaw(try Self.body([Self.edit("habits", habit, at: 30, ["name": "Watch"])]))
            // The phone changed the name at 10 and the goal at 40, and sends both at 40.
            let reply = try await phone.pushRaw(try Self.body([Self.edit("habits", habit, at: 40, ["name": "Phone", "goalCount": 7], fieldTimes: ["name": 10])]))
            #expect(reply.status(0) == "applied")
            let merged = try await Self.record(phone, "habits", habit)
            #expect(merged?["name"] as? String == "Watch")
            #expect(merged?["goalCount"] as? Int == 7)
            // The same content again in a new batch: its goal is stored already, its name loses
            // again (and is logged again: another batch's write).
            let again = try await phone.pushRaw(try Self.body([Self.edit("habits", habit, at: 40, ["name": "Phone", "goalCount": 7], fieldTimes: ["name": 10])]))
            #expect(again.status(0) == "superseded")
            #expect(try await world.count("conflict_log", where: "field = 'name'") == 2)
        }
    }

    @Test func aFieldNotSentIsNeverOverwrittenAndNullClearsIt() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let phone = try await world.client(server, user: "ada", device: "phone")
            let old = phone.withDevice("old-app")
            let habit = UUID()
            var withColor = Wire.habit()
            withColor["color"] = "#FF0000"
            withColor["habitDescription"] = "twenty pages"
            _ = try await phone.push([Wire.change("habits", habit, at: Wire.at(0), record: withColor)])
            // An app that does not know `color` sends the whole record it knows (protocol 1).
            #expect(try await old.push([Wire.change("habits", habit, at: Wire.at(10), record: Wire.habit(name: "Renamed"))]).status(0) == "applied")
            var merged = try await Self.record(phone, "habits", habit)
            #expect(merged?["name"] as? String == "Renamed")
            #expect(merged?["color"] as? String == "#FF0000")
            #expect(merged?["habitDescription"] as? String == "twenty pages")
            // A field sent as null is cleared.
            #expect(try await phone.pushRaw(try Self.body([Self.edit("habits", habit, at: 20, ["color": NSNull()])])).status(0) == "applied")
            merged = try await Self.record(phone, "habits", habit)
            #expect(merged?["color"] is NSNull)
            #expect(try await world.count("habits", where: "color IS NULL AND habit_description = 'twenty pages'") == 1)
        }
    }

    @Test func whatIsInvalidIsRejectedByFieldAndChangesNothing() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let phone = try await world.client(server, user: "ada", device: "phone")
            let watch = phone.withDevice("watch")
            let habit = UUID(), breaking = UUID()
            var ceiling = Wire.habit(goal: 5)
            ceiling["habitType"] = "breaking"
            ceiling["baselineCount"] = 10
            _ = try await phone.push([
                Wire.change("habits", habit, at: Wire.at(0), record: Wire.habit()),
                Wire.change("habits", breaking, at: Wire.at(0), record: ceiling),
            ])
            let reply = try await phone.pushRaw(
                try Self.body([
                    Self.edit("habits", habit, at: 10, ["goalCount": 0]),  // out of range
                    Self.edit("habits", habit, at: 10, ["colour": "#FFFFFF"]),  // no such field
                    Self.edit("habits", UUID(), at: 10, ["name": "New"]),  // a new record needs every required field
                    Self.edit("habits", habit, at: 10, ["name": "Later"], fieldTimes: ["name": 11]),  // a field time after updatedAt
                    Self.edit("habits", habit, at: 10, ["name": "X"], fieldTimes: ["goalCount": 5]),  // a time for a field not sent
                    Self.edit("habits", habit, at: 10, ["name": "\u{0}"]),  // a control character
                    Self.edit(
                        "dailyProgress", UUID(), at: 10, ["habitId": habit.uuidString, "date": Wire.day(0), "progressCount": 1],
                        fieldTimes: ["date": 5]),
                    Self.edit("habits", habit, at: 12, ["icon": "ok"]),  // valid: applied beside the others
                ]))
            #expect(reply.status == 200)
            let expected: [(String, String)] = [
                ("invalid_field", "goalCount"), ("unknown_field", "colour"), ("invalid_field", "habitType"),
                ("invalid_field", "fieldTimes.name"), ("invalid_field", "fieldTimes.goalCount"),
                ("invalid_field", "name"), ("invalid_field", "fieldTimes"),
            ]
            for (index, (code, field)) in expected.enumerated() {
                #expect(reply.status(index) == "rejected", "\(index): \(reply.result(index))")
                #expect(reply.errorCode(index) == code, "\(index): \(reply.result(index))")
                #expect((reply.result(index)["error"] as? JSON)?["field"] as? String == field, "\(index): \(reply.result(index))")
            }
            #expect(reply.status(7) == "applied")
            #expect(try await world.count("habits", where: "goal_count = 10 AND name = 'Read' AND icon = 'ok'") == 1)
            // fieldTimes is protocol 2's: under 1 it is an unknown field of the change.
            let v1 = try await phone.pushRaw(try Self.body([Self.edit("habits", habit, at: 30, ["name": "Y"], fieldTimes: ["name": 30])], version: nil))
            #expect(v1.errorCode(0) == "unknown_field")

            // Each edit is valid with the record it saw; together they break the ceiling rule.
            #expect(try await phone.pushRaw(try Self.body([Self.edit("habits", breaking, at: 10, ["goalCount": 8])])).status(0) == "applied")
            let clash = try await watch.pushRaw(try Self.body([Self.edit("habits", breaking, at: 11, ["baselineCount": 6])]))
            #expect(clash.status(0) == "rejected")
            #expect((clash.result(0)["error"] as? JSON)?["field"] as? String == "baselineCount")
            #expect((clash.result(0)["error"] as? JSON)?["message"] as? String ?? "" != "")
            #expect(try await world.count("habits", where: "id = '\(breaking.uuidString.lowercased())' AND goal_count = 8 AND baseline_count = 10") == 1)
            #expect(try await world.count("conflict_log", where: "outcome = 'rejected' AND error_field = 'baselineCount'") == 1)
        }
    }

    /// Issue 44: an older write of the value a field already holds lost nothing. Alone it is
    /// `superseded` and not logged, neither whole nor by field; beside a field that wins it is
    /// `applied`; the conflict log stays empty.
    @Test func anOlderWriteOfTheSameValueIsNoConflict() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let (phone, watch, habit) = try await Self.phoneWatchAndHabit(world, server)
            #expect(try await watch.pushRaw(try Self.body([Self.edit("habits", habit, at: 20, ["name": "Read books"])])).status(0) == "applied")
            let same = try await phone.pushRaw(try Self.body([Self.edit("habits", habit, at: 10, ["name": "Read books"])]))
            #expect(same.status(0) == "superseded")
            let withIcon = try await phone.pushRaw(try Self.body([Self.edit("habits", habit, at: 10, ["name": "Read books", "icon": "x"])]))
            #expect(withIcon.status(0) == "applied")
            #expect(try await world.count("conflict_log") == 0, "nothing was lost")
            // A different older value is a loss, logged by its field.
            #expect(try await phone.pushRaw(try Self.body([Self.edit("habits", habit, at: 10, ["name": "Reading"])])).status(0) == "superseded")
            #expect(try await world.count("conflict_log", where: "field = 'name'") == 1)
            #expect(try await world.count("conflict_log") == 1)
        }
    }

    /// Issue 44: `null` sets a field to its default, also where the default is not null (an
    /// icon's `""`, a reminder's `isActive: true`, the settings' timer of 30), in what is
    /// stored and what is pulled.
    @Test func nullSetsAFieldToItsDefault() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let phone = try await world.client(server, user: "ada", device: "phone")
            let habit = UUID(), reminder = UUID()
            var withIcon = Wire.habit()
            withIcon["icon"] = "📚"
            withIcon["habitDescription"] = "twenty pages"
            var inactive = Wire.reminder(habit: habit)
            inactive["isActive"] = false
            _ = try await phone.push([
                Wire.change("habits", habit, at: Wire.at(0), record: withIcon), Wire.change("reminders", reminder, at: Wire.at(0), record: inactive),
                Wire.change("userSettings", UUID(), at: Wire.at(0), record: Wire.settings(timer: 40)),
            ])
            let cleared = try await phone.pushRaw(
                try Self.body([
                    Self.edit("habits", habit, at: 10, ["icon": NSNull(), "habitDescription": NSNull()]),
                    Self.edit("reminders", reminder, at: 10, ["isActive": NSNull()]),
                    Self.edit("userSettings", UUID(), at: 10, ["gatewayTimerDuration": NSNull()]),
                ]))
            #expect((0..<3).allSatisfy { cleared.status($0) == "applied" }, "\(cleared.results)")
            let state = try await phone.state().values
            func record(_ collection: String) -> JSON? { state.first { $0["collection"] as? String == collection }?["record"] as? JSON }
            #expect(record("habits")?["icon"] as? String == "")
            #expect(record("habits")?["habitDescription"] as? String == "")
            #expect(record("reminders")?["isActive"] as? Bool == true)
            #expect(record("userSettings")?["gatewayTimerDuration"] as? Int == 30)
            #expect(try await world.count("habits", where: "icon = '' AND habit_description = ''") == 1)
            #expect(try await world.count("reminders", where: "is_active") == 1)
            #expect(try await world.count("user_settings", where: "gateway_timer_duration = 30") == 1)
        }
    }

    @Test func remindersAppsAndSettingsMergeByFieldToo() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let phone = try await world.client(server, user: "ada", device: "phone")
            let watch = phone.withDevice("watch")
            let habit = UUID(), reminder = UUID(), app = UUID(), settings = UUID()
            _ = try await phone.push([
                Wire.change("habits", habit, at: Wire.at(0), record: Wire.habit()),
                Wire.change("reminders", reminder, at: Wire.at(0), record: Wire.reminder(habit: habit)),
                Wire.change("selectedApps", app, at: Wire.at(0), record: Wire.selectedApp()),
                Wire.change("userSettings", settings, at: Wire.at(0), record: Wire.settings()),
            ])
            _ = try await phone.pushRaw(
                try Self.body([
                    Self.edit("reminders", reminder, at: 10, ["time": "21:15"]),
                    Self.edit("selectedApps", app, at: 10, ["orderIndex": 4]),
                    Self.edit("userSettings", settings, at: 10, ["timezone": "Europe/Berlin"]),
                ]))
            let watchReply = try await watch.pushRaw(
                try Self.body([
                    Self.edit("reminders", reminder, at: 20, ["isActive": false]),
                    Self.edit("selectedApps", app, at: 20, ["isInstalled": false]),
                    Self.edit("userSettings", UUID(), at: 20, ["gatewayTimerDuration": 40]),
                ]))
            #expect((0..<3).allSatisfy { watchReply.status($0) == "applied" }, "\(watchReply.results)")
            let state = try await phone.state().values
            func record(_ collection: String) -> JSON? {
                state.first { $0["collection"] as? String == collection && $0["op"] as? String == "upsert" }?["record"] as? JSON
            }
            #expect(record("reminders")?["time"] as? String == "21:15")
            #expect(record("reminders")?["isActive"] as? Bool == false)
            #expect(record("selectedApps")?["orderIndex"] as? Int == 4)
            #expect(record("selectedApps")?["isInstalled"] as? Bool == false)
            #expect(record("userSettings")?["timezone"] as? String == "Europe/Berlin")
            #expect(record("userSettings")?["gatewayTimerDuration"] as? Int == 40)
            #expect(try await world.count("users", where: "time_zone = 'Europe/Berlin'") == 1, "the user's calendar follows the merged settings")
            #expect(try await world.count("conflict_log") == 0)
        }
    }

    /// The merge compares a stored field with a sent one as the server renders them; Swift's
    /// rendering (`CanonicalFields`) must be PostgreSQL's exactly, or a replay would look like
    /// another value. Records with every field, in unusual spellings, pulled back and compared.
    @Test func swiftRendersEveryFieldAsPostgreSQLDoes() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let phone = try await world.client(server, user: "ada", device: "phone")
            let habit = UUID(), reminder = UUID(), app = UUID()
            var full = Wire.habit(name: " Read 📚 e\u{301} ")
            full.merge([
                "habitDescription": "line\nbreak", "icon": "", "color": "#aBcDeF80", "habitType": "breaking", "baselineCount": 2_147_483_647,
                "baselineUnit": "", "schedule": ["type": "specificWeekdays", "weekdays": ["friday", "monday"]], "endDate": "9999-12-31",
                "createdAt": "2026-11-20 08:15:30.1+05:30",
            ]) { $1 }
            let records: [(String, UUID, JSON)] = [
                ("habits", habit, full),
                ("reminders", reminder, ["habitId": habit.uuidString.uppercased(), "time": "00:00", "isActive": false, "notificationIdentifier": "n\u{00A0}é"]),
                ("selectedApps", app, ["appName": "A", "iconName": "i", "urlScheme": "x-y+z.1://", "dateAdded": "1970-01-01T00:00:00.0005Z", "orderIndex": 0]),
                ("achievements", UUID(), ["achievementId": "streak-7 ✓", "title": "Seven", "unlockedAt": "2026-11-20T08:15:30+01:00"]),
                (
                    "userSettings", UUID(),
                    [
                        "timezone": "America/Argentina/Buenos_Aires", "selectedInterestTags": ["", "🏃", "a\u{301}"],
                        "frePhase": "phase2Complete", "hasCompletedOnboarding": true, "gatewayTimerDuration": 45,
                    ]
                ),
            ]
            let reply = try await phone.push(records.map { Wire.change($0.0, $0.1, at: Wire.at(0), record: $0.2) })
            #expect((0..<records.count).allSatisfy { reply.status($0) == "applied" }, "\(reply.results)")
            let state = try await phone.state().values
            for (collection, _, sent) in records {
                guard let pulled = state.first(where: { $0["collection"] as? String == collection })?["record"],
                    let collectionName = SyncCollection(rawValue: collection)
                else { Issue.record("\(collection) not pulled"); continue }
                let pulledValue = try JSONParser.parse(try JSONSerialization.data(withJSONObject: pulled))
                let sentValue = try JSONParser.parse(try JSONSerialization.data(withJSONObject: sent))
                guard case .object(let sentFields) = sentValue else { continue }
                let validated = try ValidatedRecord.validate(collectionName, sentFields, context: .standalone())
                var canonical = CanonicalFields.of(validated) ?? [:]
                // createdAt unsent would be the server's clock; it was sent here.
                if collection != "habits" { canonical["createdAt"] = nil }
                #expect(JSONValue.object(canonical).jsonText == pulledValue.jsonText, "\(collection)")
            }
        }
    }
}
