import Foundation
import HabitSyncDomain
import SeededRandom

/// Random changes over every collection: mostly valid records (so that state builds up and
/// conflicts happen), each with a chance of hostile fields drawn from the corpus, duplicated
/// ids, ids reused across collections, deletes of unknown ids, and envelope-level garbage.
struct ChangeGenerator {
    let corpus: FuzzCorpus
    let now: Date

    static let collections = [
        "habits", "reminders", "dailyProgress", "xpTransactions", "achievements", "focusSessions",
        "usageEvents", "selectedApps", "userSettings", "globalStreak", "bogus",
    ]

    func pick<T>(_ values: [T], _ random: inout SeededGenerator) -> T { values[Int(random.next() % UInt64(values.count))] }
    func chance(_ percent: UInt64, _ random: inout SeededGenerator) -> Bool { random.next() % 100 < percent }

    /// A valid record of `collection`, referring to habits from the id pool.
    func record(_ collection: String, _ random: inout SeededGenerator) -> [String: Any] {
        let times = FuzzCorpus.times(now: now)
        let recent = Array(times.prefix(6))
        let day = LocalDate(now.addingTimeInterval(-Double(random.next() % 20) * 86_400), in: .gmt).description
        switch collection {
        case "habits":
            var habit: [String: Any] = [
                "name": pick(["Read", "Run", "Meditate", "Water"], &random), "habitType": "formation", "goalCount": Int(random.next() % 5) + 1,
                "goalUnit": "times",
                "schedule": pick(
                    [
                        ["type": "daily"], ["type": "everyNDays", "n": 2],
                        ["type": "specificWeekdays", "weekdays": ["monday", "friday"]], ["type": "frequencyWeekly", "n": 3],
                    ], &random),
                "startDate": "2026-11-01",
            ]
            if chance(20, &random) { habit["habitType"] = "breaking"; habit["baselineCount"] = 10 }
            return habit
        case "reminders": return ["habitId": pick(corpus.ids, &random).uuidString, "time": pick(["07:30", "21:00"], &random)]
        case "dailyProgress": return ["habitId": pick(corpus.ids, &random).uuidString, "date": day, "progressCount": Int(random.next() % 6), "goalCount": 3]
        case "xpTransactions": return ["amount": pick([50, -50, 10, 100_000], &random), "reason": "bonus", "timestamp": pick(recent, &random)]
        case "achievements": return ["achievementId": pick(["first_week", "streak_30", "early_bird"], &random), "title": "Nice", "unlockedAt": pick(recent, &random)]
        case "focusSessions":
            let state = pick(["active", "paused", "completed", "abandoned"], &random)
            var session: [String: Any] = ["startTime": pick(recent, &random), "state": state, "duration": pick([60, 1500, 900.5], &random)]
            if state == "completed" || state == "abandoned" { session["endTime"] = WireTime.format(now) }
            return session
        case "usageEvents":
            let type = pick(["exit_to_focus", "deepen_pause", "proceed_to_app"], &random)
            var event: [String: Any] = ["eventType": type, "timestamp": pick(recent, &random), "pauseDuration": 5, "timerDuration": 30]
            if type == "proceed_to_app" { event["targetAppName"] = "Instagram" }
            return event
        case "selectedApps": return ["appName": "Instagram", "iconName": "camera", "urlScheme": "instagram://", "dateAdded": pick(recent, &random), "orderIndex": Int(random.next() % 5)]
        case "userSettings": return ["timezone": pick(corpus.timeZones, &random), "gatewayTimerDuration": 30]
        default: return ["anything": 1]
        }
    }

    /// A hostile value of a random JSON type.
    func hostileValue(_ random: inout SeededGenerator) -> Any {
        switch random.next() % 8 {
        case 0, 1, 2: return pick(FuzzCorpus.strings, &random)
        case 3: return pick(FuzzCorpus.numbers, &random)
        case 4: return pick(FuzzCorpus.dates, &random)
        case 5: return pick(FuzzCorpus.times(now: now), &random)
        case 6: return pick([NSNull(), true, false, [], [1, 2], ["type": "daily"], [String](repeating: "monday", count: 8)] as [Any], &random)
        default: return pick(corpus.timeZones, &random)
        }
    }

    func change(_ random: inout SeededGenerator) -> [String: Any] {
        let collection = chance(95, &random) ? pick(Array(Self.collections.prefix(9)), &random) : pick(Self.collections, &random)
        var record = record(collection, &random)
        if chance(35, &random) {
            // One to three fields replaced (or added) with hostile values.
            let names =
                Array(record.keys) + [
                    "habitDescription", "color", "icon", "endDate", "difficulty", "skipReason", "skipNote", "createdAt",
                    "endTime", "pausedDuration", "notificationIdentifier", "selectedInterestTags", "frePhase", "date", "x\u{0}y",
                ]
            for _ in 0..<(1 + Int(random.next() % 3)) { record[pick(names, &random)] = hostileValue(&random) }
        }
        let deleting = chance(12, &random)
        var change: [String: Any] = [
            "collection": collection, "op": deleting ? "delete" : "upsert", "id": pick(corpus.ids, &random).uuidString.lowercased(),
            "updatedAt": chance(90, &random) ? WireTime.format(now.addingTimeInterval(Double(random.next() % 600) - 300)) : pick(FuzzCorpus.times(now: now), &random),
        ]
        let mergesByField = ["habits", "reminders", "selectedApps", "userSettings"].contains(collection)
        if !deleting, mergesByField, chance(40, &random) {
            // Protocol 2's field edits: some fields only, some with times of their own (earlier,
            // later than updatedAt, malformed, or naming a field not sent).
            record = record.filter { _ in chance(40, &random) }
            var times: [String: Any] = [:]
            for name in record.keys where chance(50, &random) {
                times[name] = chance(80, &random) ? WireTime.format(now.addingTimeInterval(-Double(random.next() % 900))) : hostileValue(&random)
            }
            if chance(5, &random) { times[pick(["name", "goalCount", "time", "orderIndex", "timezone", "x\u{0}y"], &random)] = WireTime.format(now) }
            change["fieldTimes"] = chance(95, &random) ? times : hostileValue(&random)
        } else if chance(2, &random) {
            change["fieldTimes"] = ["name": WireTime.format(now)]
        }
        if !deleting { change["record"] = record }
        // Protocol 2's increment: mostly on progress, mostly plausible, sometimes anything anywhere.
        if collection == "dailyProgress" && chance(40, &random) || chance(2, &random) {
            change["increment"] = chance(80, &random) ? pick([1, 1, 2, -1, 0, 1000, -1000, 1001], &random) : hostileValue(&random)
        }
        if chance(3, &random) { change[pick(["collection", "op", "id", "updatedAt", "record", "increment", "fieldTimes", "extra"], &random)] = hostileValue(&random) }
        return change
    }

    /// A push body: usually a well-formed batch of 1–40 changes (sometimes a change repeated),
    /// sometimes an envelope that is wrong as a whole.
    func body(_ random: inout SeededGenerator) -> (body: Data, wellFormed: Bool) {
        if chance(4, &random) {
            let garbage = pick(
                [
                    Data("{".utf8), Data("[]".utf8), Data("{\"batchId\":1,\"changes\":[]}".utf8), Data(repeating: 0x5B, count: 5000),
                    Data("{\"batchId\":\"\(UUID().uuidString)\",\"changes\":[1]}".utf8), Data([0xFF, 0xFE, 0x00]),
                ], &random)
            return (garbage, false)
        }
        var changes = (0..<(1 + Int(random.next() % 40))).map { _ in change(&random) }
        if chance(15, &random), let first = changes.first { changes.append(first) }
        var envelope: [String: Any] = ["batchId": UUID.random(using: &random).uuidString, "changes": changes]
        // Usually protocol 2 (so increments apply), sometimes none (they are rejected), rarely
        // a version no server speaks (the whole batch is a 400).
        if chance(70, &random) { envelope["protocolVersion"] = 2 } else if chance(5, &random) { envelope["protocolVersion"] = hostileValue(&random) }
        return ((try? JSONSerialization.data(withJSONObject: envelope)) ?? Data("{}".utf8), true)
    }

    /// A random query string for a GET route: known parameters with hostile values, unknown
    /// ones, repeated ones, percent-encoded bytes.
    func query(_ random: inout SeededGenerator) -> String {
        let names = ["cursor", "limit", "collections", "from", "to", "x", "limit", "cursor\u{0}"]
        let values = [
            "1", "0", "5000", "5001", "-1", "1e3", "habits", "habits,usageEvents", "habits,,", "bogus", "2026-11-20", "0001-01-01", "9999-12-31",
            "djE6MQ", "djI6MTow", "%00", "\u{0}", "a b", String(repeating: "A", count: 300), pick(FuzzCorpus.strings, &random),
        ]
        let count = Int(random.next() % 4)
        let items = (0..<count).map { _ in
            let name = pick(names, &random).addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "x"
            let value = pick(values, &random).addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "x"
            return "\(name)=\(value)"
        }
        return items.isEmpty ? "" : "?" + items.joined(separator: "&")
    }
}
