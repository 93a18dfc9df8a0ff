import Foundation
import HabitSyncDomain
import SeededRandom
import Testing

/// The merge rules of issue 26 as a pure model, checked by properties over seeded random
/// histories: replays change nothing, arrival order does not matter, replicas that exchange
/// what they received converge, and no write is lost without being reported.
@Suite struct MergeModelTests {
    /// Device ids include a canonically equivalent pair: two devices, as in PostgreSQL.
    static let devices = ["phone", "watch", "caf\u{E9}", "cafe\u{301}"]
    static let base = Date(timeIntervalSince1970: 1_795_162_530)

    static func key(_ generator: inout SeededGenerator) -> LWWKey {
        // Few distinct instants, so equal times (ties) happen often.
        LWWKey(updatedAt: base.addingTimeInterval(Double(Int.random(in: 0..<6, using: &generator))), deviceID: devices.randomElement(using: &generator) ?? "phone")
    }

    static func counterHistory(_ generator: inout SeededGenerator, sets: Bool) -> [ProgressCounter.Operation] {
        (0..<Int.random(in: 1...24, using: &generator)).map { index in
            if sets, Int.random(in: 0..<5, using: &generator) == 0 {
                return .set(.init(value: Int.random(in: 0...6, using: &generator), at: key(&generator)))
            }
            return .add(id: "op-\(index)", .init(delta: [1, 1, 1, 2, -1].randomElement(using: &generator) ?? 1, at: key(&generator)))
        }
    }

    // MARK: Counter

    @Test func twoDevicesCompletingOfflineCountBoth() {
        let t = { (seconds: Double, device: String) in LWWKey(updatedAt: Self.base.addingTimeInterval(seconds), deviceID: device) }
        // Phone and watch both show 1 (the phone's first completion); each adds one offline.
        let first = ProgressCounter.Operation.add(id: "phone/b1/0", .init(delta: 1, at: t(0, "phone")))
        let phone = ProgressCounter.Operation.add(id: "phone/b2/0", .init(delta: 1, at: t(60, "phone")))
        let watch = ProgressCounter.Operation.add(id: "watch/b1/0", .init(delta: 1, at: t(61, "watch")))
        #expect(ProgressCounter([first, phone, watch]).count == 3)
        #expect(ProgressCounter([watch, first, phone, watch, first]).count == 3, "replays count once")
        // A set replaces what came before it, and what came after it still counts.
        let setFive = ProgressCounter.Operation.set(.init(value: 5, at: t(30, "watch")))
        #expect(ProgressCounter([first, phone, watch, setFive]).count == 7)
        #expect(ProgressCounter([setFive, first]).count == 5)
        // Never below zero.
        #expect(ProgressCounter([.add(id: "x", .init(delta: -3, at: t(0, "phone")))]).count == 0)
    }

    /// Addition ids carry device ids: two devices whose ids differ only in Unicode
    /// normalisation are two devices, as PostgreSQL's key of an addition says (issue 44).
    @Test func additionsOfLookAlikeDevicesCountApart() {
        let at = LWWKey(updatedAt: Self.base, deviceID: "caf\u{E9}")
        let counter = ProgressCounter([
            .add(id: "caf\u{E9}|batch|0", .init(delta: 1, at: at)), .add(id: "cafe\u{301}|batch|0", .init(delta: 1, at: at)),
            .add(id: "caf\u{E9}|batch|0", .init(delta: 1, at: at)),
        ])
        #expect(counter.count == 2)
        #expect(counter.additions.count == 2)
    }

    @Test func counterReplaysAndArrivalOrderChangeNothing() {
        var generator = SeededGenerator(seed: 26)
        for round in 0..<2000 {
            let history = Self.counterHistory(&generator, sets: round % 2 == 0)
            let expected = ProgressCounter(history)
            let shuffled = history.shuffled(using: &generator)
            #expect(ProgressCounter(shuffled) == expected, "round \(round): order")
            let replayed = history + history.filter { _ in Bool.random(using: &generator) }.shuffled(using: &generator)
            #expect(ProgressCounter(replayed) == expected, "round \(round): replay")
        }
    }

    @Test func replicasThatExchangeWhatTheyReceivedConverge() {
        var generator = SeededGenerator(seed: 2026)
        for round in 0..<1000 {
            let history = Self.counterHistory(&generator, sets: true)
            // Three replicas each received an overlapping part, in their own order; every
            // operation reached at least one of them.
            var parts: [[ProgressCounter.Operation]] = [[], [], []]
            for operation in history {
                let first = Int.random(in: 0..<3, using: &generator)
                for index in 0..<3 where index == first || Bool.random(using: &generator) { parts[index].append(operation) }
            }
            var replicas = parts.map { ProgressCounter($0.shuffled(using: &generator)) }
            for order in [[0, 1, 2], [2, 1, 0], [1, 0, 2]] {
                var merged = ProgressCounter()
                for index in order { merged.merge(replicas[index]) }
                #expect(merged == ProgressCounter(history), "round \(round) order \(order)")
            }
            replicas[1].merge(replicas[2])
            replicas[1].merge(replicas[0])
            #expect(replicas[1].count == ProgressCounter(history).count)
        }
    }

    @Test func withoutASetTheCountIsTheSumOfEveryDistinctAddition() {
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<1000 {
            let history = Self.counterHistory(&generator, sets: false)
            var seen = Set<String>()
            var sum = 0
            for case .add(let id, let addition) in history where seen.insert(id).inserted { sum += addition.delta }
            #expect(ProgressCounter(history + history).count == max(0, sum))
        }
    }

    // MARK: Fields

    static let fieldNames = ["name", "goalCount", "color", "notes"]

    static func fieldWrites(_ generator: inout SeededGenerator) -> [(fields: [String: JSONValue], at: LWWKey)] {
        (0..<Int.random(in: 1...12, using: &generator)).map { _ in
            var fields: [String: JSONValue] = [:]
            for name in fieldNames where Bool.random(using: &generator) {
                // Look-alike strings too: different bytes, one Swift value.
                fields[name] =
                    [.string("caf\u{E9}"), .string("cafe\u{301}"), .number(Double(Int.random(in: 1...3, using: &generator))), .null, .bool(true)]
                    .randomElement(using: &generator) ?? .null
            }
            return (fields, key(&generator))
        }
    }

    @Test func disjointFieldEditsBothSurviveAndAFieldNotSentIsKept() {
        var record = FieldMerge()
        let t = { (seconds: Double, device: String) in LWWKey(updatedAt: Self.base.addingTimeInterval(seconds), deviceID: device) }
        record.apply(["name": .string("Read"), "goalCount": .number(10), "color": .string("blue")], at: t(0, "phone"))
        // Offline: the phone renames, the watch changes the goal; an old app sends only the name.
        // Each replaces one stored value (reported, as every overwrite is; which of them were
        // concurrent is for the store to tell) and leaves the other fields alone.
        #expect(record.apply(["name": .string("Read books")], at: t(60, "phone")).map(\.field) == ["name"])
        #expect(record.apply(["goalCount": .number(20)], at: t(30, "watch")).map(\.field) == ["goalCount"])
        #expect(record.record == ["name": .string("Read books"), "goalCount": .number(20), "color": .string("blue")])
        // The same field on both: the later wins and the earlier is reported with its winner.
        let losses = record.apply(["name": .string("Reading")], at: t(45, "watch"))
        #expect(losses.count == 1 && losses.first?.field == "name" && losses.first?.lost.value == .string("Reading"))
        #expect(record.record["name"] == .string("Read books"))
        #expect(record.apply(["name": .string("Read books")], at: t(60, "phone")).isEmpty, "a replay changes nothing")
    }

    @Test func fieldMergesConvergeInAnyOrderAndReportEveryLostWrite() {
        var generator = SeededGenerator(seed: 1026)
        for round in 0..<2000 {
            let writes = Self.fieldWrites(&generator)
            var reference: [String: [UInt8]]?
            for _ in 0..<3 {
                var record = FieldMerge()
                var lost: [(String, FieldMerge.Entry)] = []
                for write in writes.shuffled(using: &generator) + writes.filter({ _ in Bool.random(using: &generator) }) {
                    lost += record.apply(write.fields, at: write.at).map { ($0.field, $0.lost) }
                }
                let final = record.fields.mapValues { Array($0.value.jsonText.utf8) }
                if let reference { #expect(final == reference, "round \(round): order") } else { reference = final }
                // Every write of every field is the value kept or a reported loss.
                for write in writes {
                    for (field, value) in write.fields {
                        let entry = FieldMerge.Entry(value: value, at: write.at)
                        #expect(record.fields[field] == entry || lost.contains { $0.0 == field && $0.1 == entry }, "round \(round): \(field) write unreported")
                    }
                }
            }
        }
    }
}
