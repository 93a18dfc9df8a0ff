import Foundation
import HabitSyncDomain
import SeededRandom
import Testing

/// `FieldMergedRecord`, the store's field-by-field rule, by properties over seeded random
/// histories of upserts (some fields, each with its own time) and deletes: any order of arrival
/// ends in the same record, a replay changes nothing, every incoming field write that did not
/// end up stored is reported lost (or lost to an equal value, or to a delete), and a validation
/// failure changes nothing.
@Suite struct FieldMergedRecordTests {
    static let devices = MergeModelTests.devices
    static let base = MergeModelTests.base
    static let fields = ["a", "b", "c"]

    /// A record of fields `a` (required), `b` and `c`, numbers or strings; `b` may not be 0
    /// while `c` is 0 (a rule across fields). Canonical: every field, absent ones null.
    static func validate(_ record: [String: JSONValue]) throws(ChangeRejection) -> [String: JSONValue] {
        if let unknown = record.keys.first(where: { !fields.contains($0) }) { throw ChangeRejection(.unknownField, field: unknown, "no such field") }
        guard let a = record["a"], a != .null else { throw ChangeRejection(.invalidField, field: "a", "a is required") }
        if record["b"] == .number(0), record["c"] == .number(0) { throw ChangeRejection(.invalidField, field: "b", "b and c may not both be 0") }
        return ["a": a, "b": record["b"] ?? .null, "c": record["c"] ?? .null]
    }

    static func isRejected(_ outcome: FieldMergedRecord.Outcome) -> Bool {
        if case .rejected = outcome { return true }
        return false
    }

    static func value(_ generator: inout SeededGenerator) -> JSONValue {
        [.number(0), .number(1), .number(2), .string("x"), .string("y"), .null].randomElement(using: &generator) ?? .null
    }

    static func history(_ generator: inout SeededGenerator) -> [FieldMergedRecord.Change] {
        var changes: [FieldMergedRecord.Change] = []
        for index in 0..<Int.random(in: 1...10, using: &generator) {
            let key = MergeModelTests.key(&generator)
            if Int.random(in: 0..<6, using: &generator) == 0 {
                changes.append(.init(index: index, key: key, fields: nil))
                continue
            }
            var sent: [String: JSONValue] = [:], times: [String: LWWKey] = [:]
            for field in fields where Bool.random(using: &generator) {
                sent[field] = field == "a" ? [.number(1), .number(2), .string("x")].randomElement(using: &generator) ?? .number(1) : value(&generator)
                if Bool.random(using: &generator) {
                    // A time of its own, no later than the change's, from the same device.
                    let earlier = Int64.random(in: 0...3000, using: &generator)
                    times[field] = LWWKey(updatedAt: key.updatedAt.addingTimeInterval(-Double(earlier) / 1000), deviceID: key.deviceID)
                }
            }
            changes.append(.init(index: index, key: key, fields: sent, times: times))
        }
        return changes
    }

    /// The record every history starts from: created with every field, before all of them.
    static let created: FieldMergedRecord = {
        let key = LWWKey(updatedAt: base.addingTimeInterval(-100), deviceID: "phone")
        let first = FieldMergedRecord.Change(index: 0, key: key, fields: ["a": .number(1), "b": .number(1), "c": .number(1)])
        return FieldMergedRecord.settle(nil, [first], validate: Self.validate).record ?? FieldMergedRecord(fields: FieldMerge(), key: key, deleted: false)
    }()

    /// Applies the changes one batch each, in the order given.
    static func arrive(_ changes: [FieldMergedRecord.Change], from start: FieldMergedRecord? = created) -> (FieldMergedRecord?, [FieldMergedRecord.Settlement]) {
        var record = start
        var settlements: [FieldMergedRecord.Settlement] = []
        for change in changes {
            let settlement = FieldMergedRecord.settle(record, [change], validate: Self.validate)
            record = settlement.record
            settlements.append(settlement)
        }
        return (record, settlements)
    }

    @Test func arrivalOrderDoesNotMatterAndReplaysChangeNothing() {
        var generator = SeededGenerator(seed: 26_2)
        var rejected = 0, compared = 0
        for _ in 0..<400 {
            // The rule across fields can make the merged record invalid in one order and not in
            // another (a change rejected); such histories are counted, and compared only when
            // every change was accepted in both orders.
            let changes = Self.history(&generator)
            let (first, firstSettled) = Self.arrive(changes)
            // Every order of a short history (`ArrivalOrderTests` does the same through
            // PostgreSQL), two random ones of a longer.
            let orders = changes.count <= 5 ? ArrivalOrder.permutations(changes) : [changes.shuffled(using: &generator)]
            let others = orders.map { Self.arrive($0) }
            let anyRejected = (firstSettled + others.flatMap(\.1)).contains { $0.outcomes.values.contains(where: Self.isRejected) }
            if anyRejected { rejected += 1; continue }
            compared += 1
            for (second, _) in others { #expect(first == second, "\(changes.map { ($0.key, $0.fields as Any) })") }
            // Everything again, in any order: nothing moves, nothing is applied.
            let (replayed, replaySettled) = Self.arrive(changes.shuffled(using: &generator), from: first)
            #expect(replayed == first)
            #expect(replaySettled.allSatisfy { settlement in !settlement.outcomes.values.contains(FieldMergedRecord.Outcome.applied) })
        }
        #expect(compared > 300, "most histories are compared (\(rejected) had a rejection)")
    }

    @Test func everyIncomingFieldWriteThatIsNotStoredIsReportedLost() {
        var generator = SeededGenerator(seed: 26_3)
        for _ in 0..<400 {
            let changes = Self.history(&generator)
            let (final, settlements) = Self.arrive(changes)
            guard let final, !final.deleted else { continue }
            let reported = Set(settlements.flatMap { settlement in settlement.losses.map { lost in "\(lost.index)/\(lost.loss.field)" } })
            for (change, settlement) in zip(changes, settlements) {
                guard let sent = change.fields, let outcome = settlement.outcomes[change.index], outcome == .applied || outcome == .superseded else { continue }
                // A change the delete beat is logged whole, not by field.
                if outcome == .superseded, settlement.losses.isEmpty, !settlement.changed || settlement.record?.deleted == true { continue }
                for field in sent.keys {
                    let stored = final.fields.fields[field]
                    let key = change.times[field] ?? change.key
                    let sentValue = (try? Self.validate(Self.created.fields.record.merging(sent, uniquingKeysWith: { $1 })))?[field]
                    let survived = stored?.at == key && stored?.value.jsonText == sentValue?.jsonText
                    let sameValue = stored?.value.jsonText == sentValue?.jsonText
                    // Replaced by a later write once stored (not a conflict: a newer edit), or at
                    // the same key (one device, one millisecond, which its clock rule prevents).
                    let replacedLater = stored.map { key <= $0.at } ?? false
                    #expect(
                        survived || sameValue || reported.contains("\(change.index)/\(field)") || replacedLater,
                        "change \(change.index) field \(field): \(outcome), stored \(String(describing: stored))")
                }
            }
        }
    }

    @Test func disjointEditsBothSurviveAndTheLaterWriteOfAFieldWins() {
        let t = { (seconds: Double, device: String) in LWWKey(updatedAt: Self.base.addingTimeInterval(seconds), deviceID: device) }
        let rename = FieldMergedRecord.Change(index: 1, key: t(10, "phone"), fields: ["a": .string("renamed")])
        let goal = FieldMergedRecord.Change(index: 2, key: t(20, "watch"), fields: ["b": .number(2)])
        for order in [[rename, goal], [goal, rename]] {
            let (record, settlements) = Self.arrive(order)
            #expect(record?.fields.record == ["a": .string("renamed"), "b": .number(2), "c": .number(1)])
            #expect(settlements.allSatisfy { $0.outcomes.values.allSatisfy { $0 == .applied } && $0.losses.isEmpty })
        }
        // The same field: the later write wins; the earlier is reported with its winner.
        let other = FieldMergedRecord.Change(index: 3, key: t(30, "watch"), fields: ["a": .string("watch")])
        let (record, settlements) = Self.arrive([other, rename])
        #expect(record?.fields.record["a"] == .string("watch"))
        #expect(settlements[1].outcomes[1] == .superseded)
        #expect(settlements[1].losses.map(\.loss.field) == ["a"])
        #expect(settlements[1].losses.first?.loss.winner.at == t(30, "watch"))
        // A field time of its own: the change is later, its field is not.
        let late = FieldMergedRecord.Change(index: 4, key: t(40, "phone"), fields: ["a": .string("old"), "c": .number(9)], times: ["a": t(5, "phone")])
        let (mixed, mixedSettled) = Self.arrive([other, late])
        #expect(mixed?.fields.record == ["a": .string("watch"), "b": .number(1), "c": .number(9)])
        #expect(mixedSettled[1].outcomes[4] == .applied)
        #expect(mixedSettled[1].losses.map(\.loss.field) == ["a"])
    }

    @Test func aFieldNotSentIsKeptNullClearsAndInvalidChangesNothing() {
        let t = { (seconds: Double) in LWWKey(updatedAt: Self.base.addingTimeInterval(seconds), deviceID: "phone") }
        let clear = FieldMergedRecord.Change(index: 1, key: t(10), fields: ["b": .null])
        let (cleared, _) = Self.arrive([clear])
        #expect(cleared?.fields.record == ["a": .number(1), "b": .null, "c": .number(1)])
        let missing = FieldMergedRecord.Change(index: 2, key: t(20), fields: ["a": .null])
        let unknown = FieldMergedRecord.Change(index: 3, key: t(20), fields: ["z": .number(1)])
        let (after, settled) = Self.arrive([missing, unknown], from: cleared)
        #expect(after == cleared)
        #expect(settled[0].outcomes[2] == .rejected(ChangeRejection(.invalidField, field: "a", "a is required")))
        if case .rejected(let error)? = settled[1].outcomes[3] { #expect(error.field == "z") } else { Issue.record("not rejected") }
        // A new record needs what validation requires; its unsent fields are defaults any write beats.
        let partial = FieldMergedRecord.settle(nil, [.init(index: 0, key: t(0), fields: ["b": .number(2)])], validate: Self.validate)
        #expect(partial.record == nil)
        let new = FieldMergedRecord.settle(nil, [.init(index: 0, key: t(50), fields: ["a": .number(2)])], validate: Self.validate)
        #expect(new.record?.fields.fields["b"]?.at == .never)
        let older = FieldMergedRecord.settle(new.record, [.init(index: 1, key: t(1), fields: ["b": .string("x")])], validate: Self.validate)
        #expect(older.record?.fields.record["b"] == .string("x"))
        #expect(older.outcomes[1] == .applied)
    }

    @Test func aDeleteWinsOverOlderWritesAndALaterUpsertBringsTheRecordBack() {
        let t = { (seconds: Double, device: String) in LWWKey(updatedAt: Self.base.addingTimeInterval(seconds), deviceID: device) }
        let delete = FieldMergedRecord.Change(index: 1, key: t(20, "watch"), fields: nil)
        let older = FieldMergedRecord.Change(index: 2, key: t(10, "phone"), fields: ["b": .number(5)])
        let later = FieldMergedRecord.Change(index: 3, key: t(30, "phone"), fields: ["c": .number(7)])
        for order in [[delete, older], [older, delete]] {
            let (record, _) = Self.arrive(order)
            #expect(record?.deleted == true)
            #expect(record?.fields.record["b"] == .number(5), "the older fields merge into the tombstone either way")
        }
        let (revived, settled) = Self.arrive([delete, older, later])
        #expect(revived?.deleted == false)
        #expect(revived?.fields.record == ["a": .number(1), "b": .number(5), "c": .number(7)])
        #expect(settled[1].outcomes[2] == .superseded)
        #expect(settled[2].outcomes[3] == .applied)
    }

    /// A delete older than the record's last write loses: the record stays live, and the
    /// settlement names the delete for the conflict log whole (it carries no field to log one by
    /// one), as it names an upsert a delete beat. Issue 63: a losing delete had left no trace.
    @Test func aLosingDeleteIsLoggedWholeAsIsAnUpsertADeleteBeat() {
        let t = { (seconds: Double, device: String) in LWWKey(updatedAt: Self.base.addingTimeInterval(seconds), deviceID: device) }
        let edit = FieldMergedRecord.Change(index: 1, key: t(130, "phone"), fields: ["b": .number(3)])
        let delete = FieldMergedRecord.Change(index: 2, key: t(100, "watch"), fields: nil)
        let (record, settled) = Self.arrive([edit, delete])
        #expect(record?.deleted == false)
        #expect(record?.fields.record["b"] == .number(3))
        #expect(settled[1].outcomes[2] == .superseded)
        #expect(settled[1].loggedWhole == [2])
        #expect(settled[1].losses.isEmpty)
        // Delivered the other way round the delete applied first; nothing lost, nothing logged.
        let (other, otherSettled) = Self.arrive([delete, edit])
        #expect(other == record)
        #expect(otherSettled.allSatisfy { $0.loggedWhole.isEmpty && $0.losses.isEmpty })
        // An upsert the standing delete beats is logged whole too.
        let stale = FieldMergedRecord.Change(index: 3, key: t(50, "phone"), fields: ["c": .number(4)])
        let (_, afterDelete) = Self.arrive([delete, stale])
        #expect(afterDelete[1].outcomes[3] == .superseded && afterDelete[1].loggedWhole == [3])
    }

    /// Over random histories in every batch split: every superseded change is either named to
    /// be logged whole or lost field by field (or only to equal values, an upsert); a superseded
    /// delete is always named whole.
    @Test func everySupersededDeleteIsNamedForTheLog() {
        var generator = SeededGenerator(seed: 63_1)
        var losingDeletes = 0
        for _ in 0..<400 {
            let changes = Self.history(&generator)
            let (_, settlements) = Self.arrive(changes)
            for (change, settlement) in zip(changes, settlements) where settlement.outcomes[change.index] == .superseded {
                if change.fields == nil {
                    losingDeletes += 1
                    #expect(settlement.loggedWhole.contains(change.index), "delete \(change.index) superseded but not logged")
                }
            }
        }
        #expect(losingDeletes > 0, "the histories hold losing deletes")
    }

    /// An achievement: its first unlock stays, whoever wrote it last and in whatever order the
    /// unlocks arrive; its other fields merge as any record's.
    @Test func anAchievementKeepsItsEarliestUnlockAndTheLatestOtherFields() {
        let t = { (seconds: Double, device: String) in LWWKey(updatedAt: Self.base.addingTimeInterval(seconds), deviceID: device) }
        func validate(_ record: [String: JSONValue]) throws(ChangeRejection) -> [String: JSONValue] {
            guard case .string? = record["unlockedAt"] else { throw ChangeRejection(.invalidField, field: "unlockedAt", "unlockedAt is required") }
            return ["unlockedAt": record["unlockedAt"] ?? .null, "title": record["title"] ?? .null]
        }
        let phone = FieldMergedRecord.Change(index: 0, key: t(100, "phone"), fields: ["unlockedAt": .string("2026-11-20T07:00:00.000Z"), "title": .string("Week")])
        let watch = FieldMergedRecord.Change(index: 1, key: t(200, "watch"), fields: ["unlockedAt": .string("2026-11-19T07:00:00.000Z"), "title": .string("Week")])
        let renamed = FieldMergedRecord.Change(index: 2, key: t(300, "phone"), fields: ["unlockedAt": .string("2026-11-21T07:00:00.000Z"), "title": .string("First week")])
        var results: [FieldMergedRecord?] = []
        for order in [[phone, watch, renamed], [renamed, watch, phone], [watch, renamed, phone]] {
            var record: FieldMergedRecord?
            for change in order { record = FieldMergedRecord.settle(record, [change], earliest: ["unlockedAt"], validate: validate).record }
            #expect(record?.fields.record == ["unlockedAt": .string("2026-11-19T07:00:00.000Z"), "title": .string("First week")])
            results.append(record)
        }
        #expect(results.allSatisfy { $0 == results[0] })
        let late = FieldMergedRecord.settle(results[0], [renamed], earliest: ["unlockedAt"], validate: validate)
        #expect(late.outcomes[2] == .unchanged || late.outcomes[2] == .superseded)
    }
}
