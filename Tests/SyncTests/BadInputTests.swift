import Foundation
import FoundationNetworking
import HabitSyncAuth
import HabitSyncDomain
import HabitSyncServer
import HabitSyncStore
import LibPQClient
import ServerHarness
import SyncTestSupport
import TestSupport
import Testing

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
                ("habits", with(["endDate": Wire.day(-50)]), "invalid_field", "endDate"),
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
            for (limit, collections, cursor, extra) in [(0, nil, nil, ""), (5001, nil, nil, ""), (nil, "habits,streaks", nil, ""), (nil, nil, "garbage!", ""), (nil, nil, nil, "since=3")]
                as [(Int?, String?, String?, String)]
            {
                let reply = try await device.pull(cursor: cursor, limit: limit, collections: collections, extra: extra)
                #expect(reply.status == 400)
                #expect(reply.errorCode == "invalid_parameter")
            }
        }
    }

    @Test func statsDatesOutsideTheirRangeAre400AndTheServerLivesOn() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let token = try await world.token(user: "alice")
            for (query, field) in [
                ("to=0001-01-01", "to"), ("from=0001-01-01&to=\(Wire.day(0))", "from"), ("to=9999-12-31", "to"),
                ("to=1999-12-31", "to"), ("from=2201-01-01", "from"), ("to=2026-02-30", "to"),
            ] {
                let reply = try await TestHTTP.request("GET", server.baseURL + "/v1/stats/habits?" + query, headers: ["Authorization": "Bearer \(token)"])
                #expect(reply.status == 400, "\(query): \(reply.status)")
                let error = try reply.json()["error"] as? JSON
                #expect(error?["code"] as? String == "invalid_parameter", "\(query)")
                #expect(error?["field"] as? String == field, "\(query)")
            }
            // The range's ends themselves are fine.
            let edge = try await TestHTTP.request("GET", server.baseURL + "/v1/stats/habits?from=2200-12-02&to=2200-12-31", headers: ["Authorization": "Bearer \(token)"])
            #expect(edge.status == 200)
            #expect(try await server.get("/livez").status == 200)
        }
    }

    /// Found by libFuzzer: a timestamp with ten or more fraction digits trapped in the parser,
    /// so one push could take the server down.
    @Test func aTimestampWithManyFractionDigitsIsParsedNotATrap() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let device = try await world.client(server, user: "alice")
            var habit = Wire.habit(); habit["createdAt"] = "2026-11-20T08:15:30.12345678901234Z"
            let reply = try await device.push([Wire.change("habits", UUID(), at: "2026-11-20T08:15:30.1234567890Z", record: habit)])
            #expect(reply.status == 200)
            #expect(reply.status(0) == "applied", "\(reply.result(0))")
            #expect(try await server.get("/livez").status == 200)
        }
    }

    @Test func oddTextIsRejectedPerChangeAndTheRestOfTheBatchIsStored() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let device = try await world.client(server, user: "alice")
            let good = UUID()
            var withNUL = Wire.habit(); withNUL["name"] = "Re\u{0}ad"
            var unknownNUL = Wire.habit(); unknownNUL["note\u{0}"] = "x\u{0}y"
            var longName = Wire.habit(); longName["name"] = String(repeating: "n", count: 200) + "\n"
            var color = Wire.habit(); color["color"] = "#FFFFFF\n"
            var colorLS = Wire.habit(); colorLS["color"] = "#FFFFFF\u{2028}"
            var app = Wire.selectedApp(); app["urlScheme"] = "a://x\n"
            var spaced = Wire.habit(); spaced["name"] = " " + String(repeating: "n", count: 200) + " "
            let changes: [JSON] = [
                Wire.change("habits", UUID(), at: Wire.at(0), record: withNUL),
                Wire.change("habits", UUID(), at: Wire.at(0), record: unknownNUL),
                Wire.change("habits", UUID(), at: Wire.at(0), record: longName),
                Wire.change("habits", UUID(), at: Wire.at(0), record: color),
                Wire.change("habits", UUID(), at: Wire.at(0), record: colorLS),
                Wire.change("selectedApps", UUID(), at: Wire.at(0), record: app),
                Wire.change("habits", good, at: Wire.at(0), record: Wire.habit()),
                Wire.change("dailyProgress", UUID(), at: Wire.at(0), record: Wire.progress(habit: good)),
                Wire.change("habits", UUID(), at: Wire.at(0), record: spaced),
            ]
            let reply = try await device.push(changes)
            #expect(reply.status == 200)
            let expected: [(Int, String, String)] = [
                (0, "invalid_field", "name"), (1, "unknown_field", "note\u{FFFD}"), (2, "invalid_field", "name"),
                (3, "invalid_field", "color"), (4, "invalid_field", "color"), (5, "invalid_field", "urlScheme"),
            ]
            for (index, code, field) in expected {
                #expect(reply.status(index) == "rejected", "change \(index): \(reply.result(index))")
                #expect(reply.errorCode(index) == code, "change \(index): \(reply.result(index))")
                #expect((reply.result(index)["error"] as? JSON)?["field"] as? String == field, "change \(index): \(reply.result(index))")
            }
            #expect(reply.status(6) == "applied")
            #expect(reply.status(7) == "applied")
            // 200 characters between spaces: btrim and the server count the same 200.
            #expect(reply.status(8) == "applied", "\(reply.result(8))")
            #expect(try await world.count("conflict_log", where: "outcome = 'rejected'") == 6)
        }
    }

    @Test func aTimeZoneIsAcceptedOnlyWhenPostgreSQLKnowsItWithTheSameMeaning() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            // CET: PostgreSQL's AT TIME ZONE reads it as the fixed abbreviation (no summer time),
            // Foundation as the zone with summer time, so it means two things and is refused.
            for (index, zone) in ["GMT+0530", "UTC+5", "Mars/Olympus", "Europe/Berlin\n", "../etc/passwd", "CET", "Europe/Berlin", "Etc/GMT+5", "Asia/Kolkata", "UTC"].enumerated() {
                let device = try await world.client(server, user: "zone-\(index)")
                let reply = try await device.push([Wire.change("userSettings", UUID(), at: Wire.at(0), record: ["timezone": zone])])
                let accepted = ["Europe/Berlin", "Etc/GMT+5", "Asia/Kolkata", "UTC"].contains(zone)
                #expect(reply.status(0) == (accepted ? "applied" : "rejected"), "\(zone.debugDescription): \(reply.result(0))")
                if !accepted { #expect((reply.result(0)["error"] as? JSON)?["field"] as? String == "timezone") }
                // Whatever the zone, the user's next usage-event push is stored.
                let events = try await device.push([Wire.change("usageEvents", UUID(), at: Wire.at(1), record: Wire.usageEvent())])
                #expect(events.status == 200 && events.status(0) == "applied", "\(zone.debugDescription): \(events.status) \(events.result(0))")
            }
        }
    }

    @Test func aChangeThePostgreSQLConstraintsRefuseIsRejectedAloneAndTheBatchIsStored() async throws {
        let world = try await SyncWorld.make()
        // A rule the server does not know (a newer migration, a DBA's constraint).
        _ = try await world.database.withPool(size: 1) { pool in
            try await pool.withConnection { try await $0.simpleQuery(unsafeSQL: "ALTER TABLE habits ADD CONSTRAINT test_no_evil CHECK (name IS DISTINCT FROM 'evil')") }
        }
        try await world.serve { server in
            let device = try await world.client(server, user: "alice")
            let good = UUID(), evil = UUID(), alsoGood = UUID()
            let reply = try await device.push([
                Wire.change("habits", good, at: Wire.at(0), record: Wire.habit(name: "Read")),
                Wire.change("habits", evil, at: Wire.at(0), record: Wire.habit(name: "evil")),
                Wire.change("habits", alsoGood, at: Wire.at(0), record: Wire.habit(name: "Run")),
                Wire.change("dailyProgress", UUID(), at: Wire.at(0), record: Wire.progress(habit: good)),
                Wire.change("dailyProgress", UUID(), at: Wire.at(0), record: Wire.progress(habit: evil)),
                Wire.change("usageEvents", UUID(), at: Wire.at(0), record: Wire.usageEvent()),
            ])
            #expect(reply.status == 200)
            #expect(reply.status(0) == "applied")
            #expect(reply.status(1) == "rejected")
            #expect(reply.errorCode(1) == "refused_by_database")
            let message = (reply.result(1)["error"] as? JSON)?["message"] as? String ?? ""
            // Citus relays a worker's SQLSTATE but not the constraint's name.
            #expect(TestPostgres.onCitus || message.contains("test_no_evil"), "\(message)")
            #expect(reply.status(2) == "applied")
            #expect(reply.status(3) == "applied")
            #expect(reply.status(4) == "rejected" && reply.errorCode(4) == "unknown_reference")
            #expect(reply.status(5) == "applied")
            // Versions stay dense and pulls see exactly what was acknowledged.
            let pulled = try await device.pullAll().changes.filter { ["habits", "dailyProgress", "usageEvents"].contains($0["collection"] as? String) }
            #expect(
                Set(pulled.compactMap { $0["id"] as? String })
                    == Set(
                        [good, alsoGood].map { $0.uuidString.lowercased() }
                            + [reply.result(3)["id"], reply.result(5)["id"]].compactMap { $0 as? String }))
            #expect(try await world.count("habits") == 2)
            // The same batch again is answered from the idempotency record.
            let again = try await device.push([], batchID: UUID())
            #expect(again.status == 200)
        }
    }

    @Test func eventTimesFromTheFutureAreRejectedAndDefaultPartitionRowsAreMoved() async throws {
        // Five years on: in the future whatever day the suite runs (it was 2031, fixed).
        let year = LocalDate(Date(), in: .gmt).year + 5
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let device = try await world.client(server, user: "alice")
            var future = Wire.usageEvent(); future["timestamp"] = "\(year)-03-04T05:06:07Z"
            var xp = Wire.xp(); xp["timestamp"] = WireTime.format(Date().addingTimeInterval(3600))
            var soon = Wire.usageEvent(); soon["timestamp"] = WireTime.format(Date().addingTimeInterval(60))
            let reply = try await device.push([
                Wire.change("usageEvents", UUID(), at: Wire.at(0), record: future),
                Wire.change("xpTransactions", UUID(), at: Wire.at(0), record: xp),
                Wire.change("usageEvents", UUID(), at: Wire.at(0), record: soon),
            ])
            #expect(reply.errorCode(0) == "timestamp_in_future")
            #expect((reply.result(0)["error"] as? JSON)?["field"] as? String == "timestamp")
            #expect(reply.errorCode(1) == "timestamp_in_future")
            #expect(reply.status(2) == "applied", "within the clock skew allowance")
        }
        // Rows that reached the DEFAULT partition anyway (older servers, a bug) are moved, and
        // maintenance keeps creating partitions.
        let userID = "alice"
        try await world.database.withPool(size: 1) { pool in
            try await pool.withConnection { connection in
                try await connection.simpleQuery(unsafeSQL: "ALTER TABLE usage_events_default NO FORCE ROW LEVEL SECURITY")
                for month in ["\(year)-03-04", "\(year)-05-06", "2015-01-02"] {
                    try await connection.query(
                        """
                        INSERT INTO usage_events_default (tenant_id, user_id, id, event_type, occurred_at, pause_duration, timer_duration, updated_at, updated_by, server_version)
                        VALUES (\(world.tenant), \(userID), gen_random_uuid(), 'exit_to_focus', \(month)::timestamptz, 1, 30, now(), 'old-server', 1000)
                        """)
                }
                try await connection.simpleQuery(unsafeSQL: "ALTER TABLE usage_events_default FORCE ROW LEVEL SECURITY")
            }
            let before = try #require(WireTime.parse("\(year - 1)-12-20T00:00:00Z"))
            let report = try await MaintenanceStore(pool: pool).run(retention: .init(), now: before)
            #expect(report.defaultPartitionRowsMoved == 3)
            #expect(report.partitionsCreated > 0)
            let again = try await MaintenanceStore(pool: pool).run(retention: .init(), now: try #require(WireTime.parse("\(year)-06-01T00:00:00Z")))
            #expect(again.defaultPartitionRowsMoved == 0)
            try await pool.withConnection { connection in
                let inDefault = try await connection.query(
                    """
                    SELECT count(*) AS n FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                    WHERE c.relname IN (\("usage_events_\(year)_03"), \("usage_events_\(year)_05"))
                    """
                ).single()
                #expect(try inDefault.decode("n", as: Int.self) == 2)
                // On Citus the rows live in the month's shards and the coordinator keeps no
                // copy of them (migration 0021); elsewhere the partition holds them itself.
                let bytes = try await connection.query("SELECT pg_relation_size(\("usage_events_\(year)_03")::regclass) AS bytes").single()
                    .decode("bytes", as: Int64.self)
                #expect(TestPostgres.onCitus ? bytes == 0 : bytes > 0)
                let archived = try await connection.query(
                    "SELECT count(*) AS n FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'archive' AND c.relname = 'usage_events_2015_01'"
                ).single()
                #expect(try archived.decode("n", as: Int.self) == 1, "an old month is moved and then archived")
            }
        }
    }

    @Test func aKnownPathAskedWithAnotherMethodIs405WithAllow() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            for (method, path, allow) in [
                ("PUT", "/v1/sync/push", "POST"), ("GET", "/v1/sync/push", "POST"), ("TRACE", "/livez", "GET"),
                ("DELETE", "/v1/sync/pull", "GET"), ("POST", "/v1/stats/habits", "GET"),
            ] {
                let reply = try await TestHTTP.request(method, server.baseURL + path)
                #expect(reply.status == 405, "\(method) \(path): \(reply.status)")
                #expect(reply.header("Allow") == allow, "\(method) \(path)")
                #expect((try? reply.json())?["error"] as? [String: Any] != nil)
            }
            #expect(try await TestHTTP.request("GET", server.baseURL + "/v1/nothing-here").status == 404)
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
