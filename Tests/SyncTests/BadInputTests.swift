import Foundation
import Testing
import TestSupport

/// Malformed requests get a specific 4xx and change nothing; a bad record is rejected alone.
@Suite struct BadInputTests {
    @Test func malformedRequestsAreRefusedWholeWithASpecificCode() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let device = try await world.client(server, user: "alice")
            let good = Wire.change("habits", UUID(), at: Wire.at(0), record: Wire.habit())
            func body(_ object: Any) throws -> Data { try JSONSerialization.data(withJSONObject: object) }
            let cases: [(String, Data, [String: String], Int, String)] = [
                ("malformed JSON", Data("{\"batchId\": ".utf8), [:], 400, "malformed_json"),
                ("not an object", try body([1, 2]), [:], 400, "malformed_request"),
                ("batchId not a UUID", try body(["batchId": 12, "changes": [good]]), [:], 400, "invalid_field"),
                ("changes not an array", try body(["batchId": UUID().uuidString, "changes": "all"]), [:], 400, "invalid_field"),
                ("a change not an object", try body(["batchId": UUID().uuidString, "changes": [good, 7]]), [:], 400, "invalid_field"),
                ("unknown top-level field", try body(["batchId": UUID().uuidString, "changes": [good], "force": true]), [:], 400, "unknown_field"),
                ("1001 changes", try body(["batchId": UUID().uuidString, "changes": Array(repeating: good, count: 1001)]), [:], 413, "too_large"),
                ("9 MiB", Data(repeating: 32, count: 9 * 1024 * 1024), [:], 413, "too_large"),
                ("text/plain", try body(["batchId": UUID().uuidString, "changes": [good]]), ["Content-Type": "text/plain"], 415, "unsupported_media_type"),
                ("no device id", try body(["batchId": UUID().uuidString, "changes": [good]]), ["X-Device-Id": ""], 400, "missing_device_id"),
                ("bad gzip", Data("not gzip".utf8), ["Content-Encoding": "gzip"], 400, "invalid_encoding"),
            ]
            for (name, data, headers, status, code) in cases {
                let reply = try await device.pushRaw(data, headers: headers)
                #expect(reply.status == status, "\(name): \(reply.status)")
                #expect((reply.json["error"] as? JSON)?["code"] as? String == code, "\(name): \(reply.json)")
                #expect((reply.json["error"] as? JSON)?["message"] as? String != nil, "\(name)")
            }
            #expect(try await world.count("habits") == 0)
            #expect(try await world.count("push_batches") == 0)
        }
    }

    @Test func aGzippedBodyIsAccepted() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let device = try await world.client(server, user: "alice")
            let body = try JSONSerialization.data(withJSONObject: ["batchId": UUID().uuidString, "changes": [Wire.change("habits", UUID(), at: Wire.at(0), record: Wire.habit())]])
            let reply = try await device.pushRaw(try await gzip(body), headers: ["Content-Encoding": "gzip"])
            #expect(reply.status == 200)
            #expect(reply.status(0) == "applied")
        }
    }

    @Test func invalidRecordsAreRejectedOneByOneNamingTheField() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let device = try await world.client(server, user: "alice")
            let habit = UUID()
            _ = try await device.push([Wire.change("habits", habit, at: Wire.at(0), record: Wire.habit())])
            let h = Wire.habit()
            func with(_ changes: JSON) -> JSON { h.merging(changes) { _, new in new } }
            let cases: [(String, JSON, String, String)] = [
                ("habits", with(["nmae": "typo"]), "unknown_field", "nmae"),
                ("habits", with(["goalCount": "3"]), "invalid_field", "goalCount"),
                ("habits", with(["goalCount": 0]), "invalid_field", "goalCount"),
                ("habits", with(["goalCount": 2.5]), "invalid_field", "goalCount"),
                ("habits", with(["habitType": "quitting"]), "invalid_field", "habitType"),
                ("habits", with(["startDate": "2026-02-30"]), "invalid_field", "startDate"),
                ("habits", with(["color": "red"]), "invalid_field", "color"),
                ("habits", with(["schedule": ["type": "everyNDays", "n": 0]]), "invalid_field", "schedule.n"),
                ("habits", with(["schedule": ["type": "specificWeekdays", "weekdays": ["monday", "monday"]]]), "invalid_field", "schedule.weekdays[1]"),
                ("habits", with(["habitType": "breaking", "goalCount": 5, "baselineCount": 5]), "invalid_field", "baselineCount"),
                ("habits", with(["endDate": "2026-10-01"]), "invalid_field", "endDate"),
                ("dailyProgress", Wire.progress(habit: habit).merging(["difficulty": 6]) { _, n in n }, "invalid_field", "difficulty"),
                ("dailyProgress", Wire.progress(habit: habit).merging(["skipReason": "lazy"]) { _, n in n }, "invalid_field", "skipReason"),
                ("dailyProgress", Wire.progress(habit: UUID()), "unknown_reference", "habitId"),
                ("reminders", Wire.reminder(habit: habit, time: "25:00"), "invalid_field", "time"),
                ("focusSessions", Wire.focus(state: "active", duration: 1501), "invalid_field", "duration"),
                ("focusSessions", Wire.focus(state: "completed").merging(["endTime": Wire.at(-10)]) { _, n in n }, "invalid_field", "endTime"),
                ("usageEvents", ["eventType": "proceed_to_app", "timestamp": Wire.at(0), "pauseDuration": 1, "timerDuration": 30], "invalid_field", "targetAppName"),
                ("usageEvents", Wire.usageEvent(pause: 31), "invalid_field", "pauseDuration"),
                ("userSettings", ["gatewayTimerDuration": 60], "invalid_field", "gatewayTimerDuration"),
                ("userSettings", ["timezone": "Mars/Olympus"], "invalid_field", "timezone"),
                ("selectedApps", Wire.selectedApp().merging(["urlScheme": "instagram"]) { _, n in n }, "invalid_field", "urlScheme"),
                ("xpTransactions", Wire.xp(amount: 0), "invalid_field", "amount"),
                ("xpTransactions", Wire.xp(amount: 100_001), "invalid_field", "amount"),
            ]
            var changes = cases.map { Wire.change($0.0, UUID(), at: Wire.at(10), record: $0.1) }
            changes.append(["collection": "habits", "op": "upsert", "id": "not-a-uuid", "updatedAt": Wire.at(0), "record": Wire.habit()])
            changes.append(["collection": "habits", "op": "merge", "id": UUID().uuidString, "updatedAt": Wire.at(0), "record": Wire.habit()])
            changes.append(["collection": "habits", "op": "upsert", "id": UUID().uuidString, "updatedAt": "yesterday", "record": Wire.habit()])
            changes.append(["collection": "habits", "op": "upsert", "id": UUID().uuidString, "updatedAt": Wire.at(0), "record": Wire.habit(), "extra": 1])
            let reply = try await device.push(changes)
            #expect(reply.status == 200)
            for (index, testCase) in cases.enumerated() {
                let error = reply.result(index)["error"] as? JSON
                #expect(reply.status(index) == "rejected", "\(testCase.0) \(testCase.3)")
                #expect(error?["code"] as? String == testCase.2, "\(testCase.0) \(testCase.3): \(error ?? [:])")
                #expect(error?["field"] as? String == testCase.3, "\(testCase.0): \(error ?? [:])")
            }
            let tail = cases.count
            #expect(reply.errorCode(tail) == "invalid_field")
            #expect(reply.errorCode(tail + 1) == "invalid_field")
            #expect(reply.errorCode(tail + 2) == "invalid_field")
            #expect(reply.errorCode(tail + 3) == "unknown_field")
            // Nothing of them was written, and every one is in the conflict log.
            #expect(try await world.count("habits") == 1)
            #expect(try await world.count("daily_progress") + world.count("usage_events") + world.count("user_settings") == 0)
            #expect(try await world.count("conflict_log", where: "outcome = 'rejected'") == changes.count)
        }
    }

    @Test func badPullParametersAre400() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let device = try await world.client(server, user: "alice")
            for (limit, collections, cursor, extra) in [(0, nil, nil, ""), (5001, nil, nil, ""), (nil, "habits,streaks", nil, ""), (nil, nil, "garbage!", ""), (nil, nil, nil, "since=3")] as [(Int?, String?, String?, String)] {
                let reply = try await device.pull(cursor: cursor, limit: limit, collections: collections, extra: extra)
                #expect(reply.status == 400)
                #expect(reply.errorCode == "invalid_parameter")
            }
        }
    }
}

/// gzip via the system's gzip tool, so the test does not reuse the server's own decoder.
func gzip(_ data: Data) async throws -> Data {
    let directory = try makeTemporaryDirectory("gzip")
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("body")
    try data.write(to: file)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/gzip")
    process.arguments = ["-9", file.path]
    try process.run()
    await process.exited()
    return try Data(contentsOf: directory.appendingPathComponent("body.gz"))
}
