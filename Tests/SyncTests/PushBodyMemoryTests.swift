import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HabitSyncAuth
import HabitSyncDomain
import HabitSyncServer
import HabitSyncStore
import LibPQClient
import ServerHarness
import Testing
import TestSupport

/// Issue 9, items 1–6: what hostile or merely unusual devices did to the server, each through
/// the real HTTP API against a real PostgreSQL.
@Suite struct HardeningTests {
    // MARK: 1. One request killed the process

    @Test func statsDatesOutsideTheirRangeAre400AndTheServerLivesOn() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let token = try await world.token(user: "alice")
            for (query, field) in [("to=0001-01-01", "to"), ("from=0001-01-01&to=2026-11-20", "from"), ("to=9999-12-31", "to"),
                                   ("to=1999-12-31", "to"), ("from=2201-01-01", "from"), ("to=2026-02-30", "to")] {
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

    // MARK: 2. A NUL byte in sub changed who you are

    @Test func aSubjectWithANULOrControlCharacterIsRefusedLikeABadSignature() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let alice = try await world.client(server, user: "alice")
            #expect(try await alice.push([Wire.change("habits", UUID(), at: Wire.at(0), record: Wire.habit())]).status == 200)
            for subject in ["alice\u{0}x", "\u{0}", "alice\n", "\u{7F}", " alice", String(repeating: "a", count: 256)] {
                let token = try await world.token(user: subject)
                for path in ["/v1/sync/pull", "/v1/stats/habits", "/v1/stats/focus"] {
                    let reply = try await TestHTTP.request("GET", server.baseURL + path, headers: ["Authorization": "Bearer \(token)"])
                    #expect(reply.status == 401, "\(subject.debugDescription) \(path): \(reply.status) \(reply.text.prefix(200))")
                }
            }
            // What identity providers issue still works.
            for subject in ["auth0|5f3c9a", "alice@example.com", "é-ü 名前", "o'brien", "back\\slash", String(repeating: "a", count: 255)] {
                let device = SyncClient(baseURL: server.baseURL, token: try await world.token(user: subject), device: "d")
                #expect(try await device.pull().status == 200, "\(subject)")
            }
        }
    }

    @Test func withoutAUserEveryPolicyDeniesUnlessTheScopeIsTenantWide() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let alice = try await world.client(server, user: "alice")
            _ = try await alice.push([Wire.change("habits", UUID(), at: Wire.at(0), record: Wire.habit())])
        }
        try await world.database.withPool(size: 1, role: "habitsync_app") { pool in
            // SET LOCAL, as the server sets them (on Citus the only form the workers see).
            let tenant = "SET LOCAL habitsync.tenant_id = '\(world.tenant.uuidString.lowercased())'"
            let cases: [(String, Int)] = [
                ("\(tenant); SET LOCAL habitsync.user_id = ''", 0),
                (tenant, 0),
                ("\(tenant); SET LOCAL habitsync.user_id = ''; SET LOCAL habitsync.scope = 'user'", 0),
                ("\(tenant); SET LOCAL habitsync.user_id = 'bob'", 0),
                ("\(tenant); SET LOCAL habitsync.user_id = 'alice'", 1),
                ("\(tenant); SET LOCAL habitsync.scope = 'tenant'", 1),
            ]
            for (settings, expected) in cases {
                let visible = try await pool.withTransaction { connection in
                    try await connection.simpleQuery(unsafeSQL: settings)
                    return try await connection.query("SELECT count(*) AS n FROM habits").single().decode("n", as: Int.self)
                }
                #expect(visible == expected, "\(settings)")
            }
            var refused = false
            do {
                try await pool.withTransaction { try await RequestScope.set(on: $0, tenantID: world.tenant, userID: "") }
            } catch is RequestScope.EmptyUser {
                refused = true
            }
            #expect(refused)
            // The scope is written into `SET LOCAL` commands as literals: whatever a valid
            // subject holds arrives as the same setting, and nothing else runs.
            for subject in ["o'brien", "back\\slash", "\\'; SET LOCAL ROLE postgres; --", "é-ü 名前\u{301}", String(repeating: "'\\", count: 127)] {
                let seen = try await pool.withTransaction { connection in
                    try await RequestScope.set(on: connection, tenantID: world.tenant, userID: subject)
                    return try await connection.query("SELECT current_setting('habitsync.user_id') AS u, current_user::text AS r").single()
                }
                #expect(try seen.decode("u", as: String.self) == subject)
                #expect(try seen.decode("r", as: String.self) == "habitsync_app")
            }
        }
    }

    // MARK: 3. One odd change wedged the whole batch

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
            let expected: [(Int, String, String)] = [(0, "invalid_field", "name"), (1, "unknown_field", "note\u{FFFD}"), (2, "invalid_field", "name"),
                                                     (3, "invalid_field", "color"), (4, "invalid_field", "color"), (5, "invalid_field", "urlScheme")]
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
            #expect(Set(pulled.compactMap { $0["id"] as? String }) == Set([good, alsoGood].map { $0.uuidString.lowercased() }
                + [reply.result(3)["id"], reply.result(5)["id"]].compactMap { $0 as? String }))
            #expect(try await world.count("habits") == 2)
            // The same batch again is answered from the idempotency record.
            let again = try await device.push([], batchID: UUID())
            #expect(again.status == 200)
        }
    }

    // MARK: 4. A new device could not finish its first sync after a purge

    @Test func aNewDeviceCompletesWithAnyLimitAndFilterAfterAPurge() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let old = try await world.client(server, user: "alice")
            let habits = (0..<5).map { _ in UUID() }
            _ = try await old.push(habits.enumerated().map { Wire.change("habits", $1, at: Wire.at(Double($0)), record: Wire.habit(name: "H\($0)")) })
            _ = try await old.push([Wire.change("usageEvents", UUID(), at: Wire.at(1), record: Wire.usageEvent())])
            let oldCursor = try await old.pullAll().cursor
            // Delete the newest habits: the live ones end below the purge horizon.
            _ = try await old.push([Wire.change("habits", habits[3], at: Wire.at(20), record: nil), Wire.change("habits", habits[4], at: Wire.at(21), record: nil)])
            let report = try await world.database.withPool(size: 1) { pool in
                try await MaintenanceStore(pool: pool).run(retention: .init(tombstones: 0.001, pushBatches: 90 * 86_400, conflicts: 90 * 86_400, usageEvents: 90 * 86_400),
                                                           now: Date().addingTimeInterval(1))
            }
            #expect(report.tombstonesPurged == 2)
            let live = Set(habits.prefix(3).map { $0.uuidString.lowercased() })
            for collections in [nil, "habits", "habits,usageEvents", "usageEvents"] as [String?] {
                for limit in [1, 2, 500] {
                    let device = try await world.client(server, user: "alice", device: "new-\(limit)")
                    var cursor: String?
                    var seen: [JSON] = []
                    var pages = 0
                    while pages < 50 {
                        pages += 1
                        let page = try await device.pull(cursor: cursor, limit: limit, collections: collections)
                        #expect(page.status == 200, "collections \(collections ?? "all"), limit \(limit), page \(pages): \(page.status) \(page.json)")
                        guard page.status == 200 else { break }
                        seen += page.changes
                        cursor = page.cursor
                        if !page.hasMore { break }
                    }
                    #expect(pages < 50, "collections \(collections ?? "all"), limit \(limit): never finished")
                    let habitIDs = Set(seen.filter { $0["collection"] as? String == "habits" }.compactMap { $0["id"] as? String })
                    let wantsHabits = collections == nil || collections!.contains("habits")
                    #expect(habitIDs == (wantsHabits ? live : []), "collections \(collections ?? "all"), limit \(limit)")
                    #expect(!seen.contains { $0["op"] as? String == "delete" })
                    // The finished cursor keeps working for incremental pulls of the same collections.
                    #expect(try await device.pull(cursor: cursor, collections: collections).status == 200)
                }
            }
            // A cursor from before the purge is really below the horizon.
            #expect(try await old.pull(cursor: oldCursor).status == 410)
            // A cursor belongs to its collections.
            let filtered = try await old.pull(collections: "habits")
            let mixed = try await old.pull(cursor: filtered.cursor, collections: "usageEvents")
            #expect(mixed.status == 400)
            #expect(mixed.errorCode == "invalid_parameter")
        }
    }

    @Test func aRecordDeletedDuringAnInitialSyncArrivesAsATombstone() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let phone = try await world.client(server, user: "alice")
            let habits = (0..<3).map { _ in UUID() }
            _ = try await phone.push(habits.enumerated().map { Wire.change("habits", $1, at: Wire.at(Double($0)), record: Wire.habit(name: "H\($0)")) })
            let watch = try await world.client(server, user: "alice", device: "watch")
            let first = try await watch.pull(limit: 1)
            #expect(first.changes.first?["id"] as? String == habits[0].uuidString.lowercased())
            _ = try await phone.push([Wire.change("habits", habits[0], at: Wire.at(10), record: nil)])
            var rest = try await watch.pullAll(from: first.cursor, limit: 1).changes
            rest = rest.filter { $0["id"] as? String == habits[0].uuidString.lowercased() }
            #expect(rest.count == 1 && rest.first?["op"] as? String == "delete", "\(rest)")
        }
    }

    // MARK: 5. Memory

    @Test func aBodyThatWouldBuildAHugeTreeIsRefusedBeforeItIsBuilt() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let device = try await world.client(server, user: "alice")
            let zeros = "[" + Array(repeating: "0", count: 3_000_000).joined(separator: ",") + "]"
            let body = #"{"batchId":"\#(UUID().uuidString)","changes":[{"collection":"habits","op":"upsert","id":"\#(UUID().uuidString)","updatedAt":"2026-11-20T08:15:30Z","record":{"name":\#(zeros)}}]}"#
            let reply = try await device.pushRaw(Data(body.utf8))
            #expect(reply.status == 413)
            #expect((reply.json["error"] as? JSON)?["code"] as? String == "too_large")
            let deep = String(repeating: "[", count: 100_000)
            let nested = try await device.pushRaw(Data(#"{"batchId":"\#(UUID().uuidString)","changes":\#(deep)"#.utf8))
            #expect(nested.status == 413)
        }
    }

    @Test func pushesBeyondTheDecodingBudgetAre503WithRetryAfter() async throws {
        let world = try await SyncWorld.make()
        func body(_ changes: Int) throws -> Data {
            try JSONSerialization.data(withJSONObject: ["batchId": UUID().uuidString,
                "changes": (0..<changes).map { _ in Wire.change("usageEvents", UUID(), at: Wire.at(0), record: Wire.usageEvent()) }])
        }
        let large = try body(400), bobs = try body(200)
        // Room for Alice's large push, not for Bob's beside it; each alone fits.
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0, statementTimeout: .seconds(120))
        configuration.bodyBudgetBytes = RequestBodyBudget.estimate(bodyBytes: large.count) + RequestBodyBudget.estimate(bodyBytes: bobs.count) / 2
        try await world.serve(configuration) { server in
            let alice = try await world.client(server, user: "alice")
            let bob = SyncClient(baseURL: server.baseURL, token: try await world.token(user: "bob"), device: "phone", connections: 1)
            #expect(try await alice.push([Wire.change("habits", UUID(), at: Wire.at(0), record: Wire.habit())]).status == 200)
            // Alice's large push reserves its share and then waits for her row lock, held here.
            let pending = try await world.holdingUserLock("alice") {
                let pending = Task { try await alice.pushRaw(large).status }
                try await world.waitForLockWaiters(1)
                let refused = try await bob.pushRaw(bobs, allowUnavailable: true)
                #expect(refused.status == 503)
                #expect((refused.json["error"] as? JSON)?["code"] as? String == "busy")
                return pending
            }
            #expect(try await pending.value == 200)
            // With the budget free again, Bob is served.
            #expect(try await bob.pushRaw(bobs).status == 200)
        }
    }

    /// A push that alone needs more than the whole budget is 413, which no retry cures; it is
    /// never admitted past the budget (the old rule let one in whenever nothing else was held).
    @Test func aPushLargerThanTheWholeBudgetIs413() async throws {
        let world = try await SyncWorld.make()
        var configuration = ServerConfiguration.forTests
        configuration.bodyBudgetBytes = 1 << 20
        try await world.serve(configuration) { server in
            let alice = try await world.client(server, user: "alice")
            let changes = (0..<400).map { _ in Wire.change("usageEvents", UUID(), at: Wire.at(0), record: Wire.usageEvent()) }
            let reply = try await alice.push(changes)
            #expect(reply.status == 413)
            #expect((reply.json["error"] as? JSON)?["code"] as? String == "too_large")
            #expect(try await alice.push(Array(changes.prefix(10))).status == 200)
        }
    }

    /// Gzip bodies reserve by their real size once inflated, not the largest possible body:
    /// otherwise every gzip push would take the whole budget and they would run one at a time.
    @Test func smallGzipPushesShareTheBudget() async throws {
        let world = try await SyncWorld.make()
        try await world.serve(ServerConfiguration(host: "127.0.0.1", port: 0, statementTimeout: .seconds(120))) { server in
            let alice = try await world.client(server, user: "alice")
            let bob = SyncClient(baseURL: server.baseURL, token: try await world.token(user: "bob"), device: "phone", connections: 1)
            #expect(try await alice.push([Wire.change("habits", UUID(), at: Wire.at(0), record: Wire.habit())]).status == 200)
            func gzipped(_ changes: [JSON]) async throws -> Data {
                try await gzip(try JSONSerialization.data(withJSONObject: ["batchId": UUID().uuidString, "changes": changes]))
            }
            let aliceBody = try await gzipped([Wire.change("habits", UUID(), at: Wire.at(1), record: Wire.habit())])
            let bobBody = try await gzipped([Wire.change("habits", UUID(), at: Wire.at(1), record: Wire.habit())])
            let pending = try await world.holdingUserLock("alice") {
                let pending = Task { try await alice.pushRaw(aliceBody, headers: ["Content-Encoding": "gzip"]).status }
                try await world.waitForLockWaiters(1)
                // Alice's gzip push holds its reservation while it waits; Bob's is admitted too.
                let reply = try await bob.pushRaw(bobBody, headers: ["Content-Encoding": "gzip"])
                #expect(reply.status == 200, "\(reply.json)")
                return pending
            }
            #expect(try await pending.value == 200)
        }
    }

    // MARK: 6. A device clock years ahead broke maintenance later

    @Test func eventTimesFromTheFutureAreRejectedAndDefaultPartitionRowsAreMoved() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let device = try await world.client(server, user: "alice")
            var future = Wire.usageEvent(); future["timestamp"] = "2031-03-04T05:06:07Z"
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
                for month in ["2031-03-04", "2031-05-06", "2015-01-02"] {
                    try await connection.query("""
                        INSERT INTO usage_events_default (tenant_id, user_id, id, event_type, occurred_at, pause_duration, timer_duration, updated_at, updated_by, server_version)
                        VALUES (\(world.tenant), \(userID), gen_random_uuid(), 'exit_to_focus', \(month)::timestamptz, 1, 30, now(), 'old-server', 1000)
                        """)
                }
                try await connection.simpleQuery(unsafeSQL: "ALTER TABLE usage_events_default FORCE ROW LEVEL SECURITY")
            }
            let report = try await MaintenanceStore(pool: pool).run(retention: .init(), now: WireTime.parse("2030-12-20T00:00:00Z")!)
            #expect(report.defaultPartitionRowsMoved == 3)
            #expect(report.partitionsCreated > 0)
            let again = try await MaintenanceStore(pool: pool).run(retention: .init(), now: WireTime.parse("2031-06-01T00:00:00Z")!)
            #expect(again.defaultPartitionRowsMoved == 0)
            try await pool.withConnection { connection in
                let inDefault = try await connection.query("SELECT count(*) AS n FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE c.relname IN ('usage_events_2031_03', 'usage_events_2031_05')").single()
                #expect(try inDefault.decode("n", as: Int.self) == 2)
                // On Citus the rows live in the month's shards and the coordinator keeps no
                // copy of them (migration 0021); elsewhere the partition holds them itself.
                let bytes = try await connection.query("SELECT pg_relation_size('usage_events_2031_03') AS bytes").single().decode("bytes", as: Int64.self)
                #expect(TestPostgres.onCitus ? bytes == 0 : bytes > 0)
                let archived = try await connection.query("SELECT count(*) AS n FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'archive' AND c.relname = 'usage_events_2015_01'").single()
                #expect(try archived.decode("n", as: Int.self) == 1, "an old month is moved and then archived")
            }
        }
    }
}
