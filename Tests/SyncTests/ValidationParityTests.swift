import Foundation
import HabitSyncDomain
import HabitSyncStore
import LibPQClient
import SyncTestSupport
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Swift's validation and PostgreSQL's constraints agree exactly: for every validated field and
/// a generated set of edge values, whatever Swift accepts the database stores, and whatever the
/// database would refuse Swift has already rejected, naming the field. A disagreement shows as
/// `refused_by_database` (the push's slow path), or as a verdict other than the local one.
@Suite struct ValidationParityTests {
    static let edgeStrings: [String] = {
        var values = [
            "", " ", "a", "  a  ", "\n", "a\n", "\na", "a\u{0}b", "\u{0}", "a\r\n", "\t", "a\tb", "\u{7F}", "\u{85}", "\u{9F}",
            "\u{2028}", "a\u{2028}", "\u{2029}", "e\u{301}", "\u{301}", "🏃‍♀️", "👍🏽", "\u{FEFF}a", "\u{200B}", "\u{00A0}", "\u{3000}",
            "\u{1680}", "a b", "Ω≈ç√", "名前", "\u{10FFFF}", "\\", "\"", "'", "%_", "null", "-0", "1e308",
            "#FFFFFF", "#FFFFFF\n", "#ffffff00", "#FFFFFF\u{2028}", "#FFF", "12:30", "23:59", "24:00", "12:30\n", "00:00",
            "a://x", "a://x\n", "a://x y", "a://x\u{00A0}", "a://\u{3000}", "instagram://", "instagram",
            "GMT+0530", "UTC+5", "UTC", "Europe/Berlin", "Etc/GMT+5", "Europe/Berlin\n", "EST5EDT", "posixrules", "localtime",
            "completed", "active", "medical", "exit_to_focus", "notStarted",
        ]
        for count in [49, 50, 51, 99, 100, 101, 199, 200, 201, 499, 500, 501, 1999, 2000, 2001, 10_000] {
            values.append(String(repeating: "x", count: count))
            values.append(String(repeating: "é", count: count))
        }
        values += [
            " " + String(repeating: "x", count: 200) + " ", String(repeating: "x", count: 200) + "\n", "\u{3000}" + String(repeating: "x", count: 199),
            String(repeating: "e\u{301}", count: 100), String(repeating: "🏃", count: 200), "\t" + String(repeating: "x", count: 199),
        ]
        return values
    }()

    static let edgeNumbers: [Double] = [
        0, -0.0, 1, -1, 2.5, 2_147_483_647, 2_147_483_648, -2_147_483_649, 9_007_199_254_740_993.0, 1e308, -1e308, Double.leastNonzeroMagnitude, 1500, 1500.0001, 100_000, 100_001,
    ]
    static let edgeDates = ["0001-01-01", "1969-12-31", "1970-01-01", "2024-02-29", "2026-02-29", "9999-12-31", "10000-01-01", "2026-11-20\n", "2026-1-2"]
    static let edgeTimes = [
        "1970-01-01T00:00:00Z", "1969-12-31T23:59:59Z", "1970-01-01T00:00:00+23:59", "9999-12-31T23:59:59.999-23:59",
        "2026-11-20T08:15:30.9999999Z", "2026-11-20T08:15:30Z\n", "2026-11-20 08:15:30+05:30", "2026-02-30T00:00:00Z",
    ]

    struct Field {
        let collection: String
        let name: String
        let values: [Any]
        /// The rest of a valid record; `index` makes natural keys distinct.
        let base: (_ index: Int, _ habit: UUID) -> JSON
    }

    static func fields() -> [Field] {
        let strings = edgeStrings as [Any]
        func habit(_: Int, _: UUID) -> JSON { Wire.habit() }
        func app(_: Int, _: UUID) -> JSON { Wire.selectedApp() }
        func progress(_ index: Int, _ habit: UUID) -> JSON {
            Wire.progress(habit: habit, date: LocalDate(dayNumber: 19_000 + index).description)
        }
        func achievement(_ index: Int, _: UUID) -> JSON { ["achievementId": "a\(index)", "title": "T", "unlockedAt": Wire.at(0)] }
        func proceed(_: Int, _: UUID) -> JSON { ["eventType": "proceed_to_app", "timestamp": Wire.at(0), "pauseDuration": 0, "timerDuration": 30, "targetAppName": "App"] }
        let bases: [SyncCollection: (_ index: Int, _ habit: UUID) -> JSON] = [
            .habits: habit, .reminders: { Wire.reminder(habit: $1) }, .dailyProgress: progress, .xpTransactions: { _, _ in Wire.xp() },
            .achievements: achievement, .focusSessions: { _, _ in Wire.focus() }, .usageEvents: proceed, .selectedApps: app,
        ]
        // Every declared field of one scalar column (`RecordFields`), with the edge values of
        // its type: a field added to a declaration is checked here without another line.
        // (userSettings, one record per user, is checked below; ids, flags, arrays and the
        // schedule object are not scalar text, numbers or times.)
        var fields: [Field] = []
        for collection in SyncCollection.allCases {
            guard let base = bases[collection] else { continue }
            for field in RecordFields.of(collection) ?? [] where field.columns.count == 1 {
                let values: [Any]
                switch field.columns[0].type {
                case .text, .time: values = strings
                case .int2, .int4, .float8: values = edgeNumbers as [Any]
                case .date: values = edgeDates
                case .timestamptz: values = edgeTimes
                case .uuid, .bool, .textArray, .timestamptzArray: continue
                }
                fields.append(Field(collection: collection.rawValue, name: field.name, values: values, base: base))
            }
        }
        return fields
    }

    @Test func whatSwiftAcceptsPostgreSQLStoresAndWhatItWouldRefuseSwiftRejects() async throws {
        let world = try await SyncWorld.make()
        let timeZones = try await world.database.withPool(size: 1, role: "habitsync_app") { try await TimeZoneCatalog().names($0) }
        try await world.serve { server in
            let device = try await world.client(server, user: "alice")
            let habit = UUID()
            #expect(try await device.push([Wire.change("habits", habit, at: Wire.at(0), record: Wire.habit())]).status(0) == "applied")
            var checked = 0, accepted = 0
            var used = 0  // natural keys (progress dates, achievement ids) distinct across all fields
            for field in Self.fields() {
                var changes: [JSON] = []
                for (index, value) in field.values.enumerated() {
                    var record = field.base(used + index, habit)
                    record[field.name] = value
                    changes.append(Wire.change(field.collection, UUID(), at: Wire.at(Double(index)), record: record))
                }
                used += changes.count
                let reply = try await device.push(changes)
                #expect(reply.status == 200, "\(field.collection).\(field.name): \(reply.status)")
                let context = ValidationContext(now: Date(), maximumSkew: 300, timeZones: timeZones)
                for (index, change) in changes.enumerated() {
                    let local = Self.localVerdict(change, context: context)
                    let label = "\(field.collection).\(field.name) = \(String(describing: field.values[index]).debugDescription.prefix(60))"
                    #expect(reply.errorCode(index) != "refused_by_database", "\(label): PostgreSQL refused what Swift accepted")
                    switch local {
                    case .success:
                        accepted += 1
                        #expect(reply.status(index) == "applied", "\(label): Swift accepts, the server answered \(reply.result(index))")
                    case .failure(let rejection):
                        #expect(reply.status(index) == "rejected", "\(label): Swift rejects (\(rejection.message)), the server answered \(reply.result(index))")
                        // The field itself, or one a rule across fields holds it to (an active
                        // focus session's endTime must be null).
                        let named = rejection.field.map { $0.hasPrefix(field.name) || field.base(0, habit)[$0] != nil } ?? false
                        #expect(named, "\(label): rejected naming \(rejection.field ?? "no field")")
                        #expect((reply.result(index)["error"] as? JSON)?["field"] as? String == rejection.field, "\(label)")
                    }
                    checked += 1
                }
            }
            // userSettings is one record per user: one user per value.
            for (field, values) in [("timezone", Self.edgeStrings), ("frePhase", Self.edgeStrings)] {
                let context = ValidationContext(now: Date(), maximumSkew: 300, timeZones: timeZones)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for (index, value) in values.enumerated() {
                        let token = try await world.token(user: "settings-\(field)-\(index)")
                        group.addTask {
                            let user = SyncClient(baseURL: server.baseURL, token: token, device: "d")
                            let change = Wire.change("userSettings", UUID(), at: Wire.at(0), record: [field: value])
                            let reply = try await user.push([change])
                            let label = "userSettings.\(field) = \(value.debugDescription.prefix(60))"
                            #expect(reply.errorCode(0) != "refused_by_database", "\(label)")
                            switch Self.localVerdict(change, context: context) {
                            case .success: #expect(reply.status(0) == "applied", "\(label): \(reply.result(0))")
                            case .failure(let rejection): #expect((reply.result(0)["error"] as? JSON)?["field"] as? String == rejection.field && rejection.field == field, "\(label)")
                            }
                        }
                        if index % 8 == 7 { try await group.next() }
                    }
                    try await group.waitForAll()
                }
                checked += values.count
            }
            #expect(checked > 2000)
            #expect(accepted > 300, "the edge values include plenty that are valid")
        }
    }

    static func localVerdict(_ change: JSON, context: ValidationContext) -> Result<PushChange, ChangeRejection> {
        guard let data = try? JSONSerialization.data(withJSONObject: change), case .object(let fields)? = try? JSONParser.parse(data) else {
            return .failure(ChangeRejection(.invalidField, "unencodable"))
        }
        do { return .success(try PushChange.validate(fields, index: 0, context: context)) } catch { return .failure(error) }
    }
}
