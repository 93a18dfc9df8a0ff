import Foundation
import HabitSyncDomain
import Testing

@Suite struct ChangeValidationTests {
    static let now = Date(timeIntervalSince1970: 1_795_162_530)

    static func change(_ collection: String = "habits", op: String = "upsert", updatedAt: String = "2026-11-20T08:00:00.000Z", record: [String: JSONValue]? = habit) -> [String: JSONValue] {
        var fields: [String: JSONValue] = ["collection": .string(collection), "op": .string(op), "id": .string(UUID().uuidString), "updatedAt": .string(updatedAt)]
        if let record { fields["record"] = .object(record) }
        return fields
    }

    static let habit: [String: JSONValue] = [
        "name": .string("Read"), "habitType": .string("formation"), "goalCount": .number(1), "goalUnit": .string("pages"),
        "schedule": .object(["type": .string("daily")]), "startDate": .string("2026-11-01"),
    ]

    func validate(_ fields: [String: JSONValue]) -> Result<PushChange, ChangeRejection> {
        do { return .success(try PushChange.validate(fields, index: 0, context: .standalone(now: Self.now))) } catch { return .failure(error) }
    }

    @Test func aValidHabitGetsItsDefaults() throws {
        let change = try validate(Self.change()).get()
        guard case .habit(let habit)? = change.record else { Issue.record("not a habit"); return }
        #expect(habit.habitDescription == "")
        #expect(habit.icon == "")
        #expect(habit.createdAt == nil)
        #expect(!change.clamped)
    }

    @Test func aClockFarAheadIsClampedToTheServers() throws {
        let ahead = try validate(Self.change(updatedAt: WireTime.format(Self.now.addingTimeInterval(301)))).get()
        #expect(ahead.clamped)
        #expect(WireTime.milliseconds(ahead.updatedAt) == WireTime.milliseconds(Self.now))
        let within = try validate(Self.change(updatedAt: WireTime.format(Self.now.addingTimeInterval(299)))).get()
        #expect(!within.clamped)
    }

    @Test(arguments: [
        ("globalStreak", "derived_collection"), ("userProgress", "derived_collection"), ("usageStreak", "derived_collection"),
        ("streaks", "unknown_collection"), ("Habits", "unknown_collection"),
    ])
    func collectionsThatCannotBePushed(_ collection: String, _ code: String) {
        guard case .failure(let rejection) = validate(Self.change(collection)) else { Issue.record("accepted"); return }
        #expect(rejection.code.rawValue == code)
        #expect(rejection.field == "collection")
    }

    @Test func deletesCarryNoRecordAndOnlyLWWCollectionsCanBeDeleted() {
        #expect((try? validate(Self.change(op: "delete", record: nil)).get()) != nil)
        guard case .failure(let withRecord) = validate(Self.change(op: "delete")) else { Issue.record("accepted"); return }
        #expect(withRecord.field == "record")
        guard case .failure(let ledger) = validate(Self.change("xpTransactions", op: "delete", record: nil)) else { Issue.record("accepted"); return }
        #expect(ledger.code == .immutableRecord)
    }

    @Test(arguments: [
        ("goalCount", JSONValue.number(0)), ("goalCount", .number(1.5)), ("goalCount", .string("1")), ("goalCount", .bool(true)),
        ("name", .string("   ")), ("habitType", .string("Habit Building")), ("startDate", .string("2026-02-30")),
        ("schedule", .object(["type": .string("everyNDays"), "n": .number(0)])), ("schedule", .object(["type": .string("daily"), "n": .number(2)])),
        ("schedule", .object(["type": .string("frequencyWeekly"), "n": .number(8)])), ("schedule", .object(["type": .string("specificWeekdays"), "weekdays": .array([])])),
        ("color", .string("#12345")), ("endDate", .string("2026-10-31")),
    ])
    func habitRulesRejectNamingTheField(_ field: String, _ value: JSONValue) {
        var record = Self.habit
        record[field] = value
        guard case .failure(let rejection) = validate(Self.change(record: record)) else { Issue.record("accepted \(field)=\(value)"); return }
        // A key that does not belong to the schedule's type (n of a daily schedule) is unknown.
        #expect(rejection.code == .invalidField || rejection.code == .unknownField)
        #expect(rejection.field?.hasPrefix(field) == true, "\(rejection)")
    }

    @Test func breakingHabitsNeedABaselineAboveTheirCeiling() {
        var record = Self.habit
        record["habitType"] = .string("breaking")
        record["goalCount"] = .number(3)
        #expect((try? validate(Self.change(record: record)).get()) == nil)
        record["baselineCount"] = .number(3)
        #expect((try? validate(Self.change(record: record)).get()) == nil)
        record["baselineCount"] = .number(4)
        #expect((try? validate(Self.change(record: record)).get()) != nil)
    }

    @Test func unknownFieldsAreNamedNotDropped() {
        var record = Self.habit
        record["goalcount"] = .number(3)
        guard case .failure(let rejection) = validate(Self.change(record: record)) else { Issue.record("accepted"); return }
        #expect(rejection.code == .unknownField)
        #expect(rejection.field == "goalcount")
    }

    @Test func focusSessionsHaveAnEndTimeExactlyWhenFinished() {
        func session(_ state: String, end: String?) -> [String: JSONValue] {
            var record: [String: JSONValue] = ["startTime": .string("2026-11-20T08:00:00Z"), "state": .string(state), "duration": .number(60)]
            if let end { record["endTime"] = .string(end) }
            return record
        }
        for (state, end, valid) in [
            ("active", nil, true), ("paused", nil, true), ("active", "2026-11-20T08:10:00Z", false), ("completed", nil, false),
            ("completed", "2026-11-20T08:10:00Z", true), ("abandoned", "2026-11-20T07:00:00Z", false),
        ] as [(String, String?, Bool)] {
            let result = try? validate(Self.change("focusSessions", record: session(state, end: end))).get()
            #expect((result != nil) == valid, "\(state) end \(end ?? "nil")")
        }
    }
}
