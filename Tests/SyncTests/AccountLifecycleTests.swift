import Foundation
import HabitSyncDomain
import HabitSyncServer
import HabitSyncStore
import LibPQClient
import ServerHarness
import SyncTestSupport
import TestSupport
import Testing

/// Issue 15: a user exports and erases their data, an admin erases a tenant, and nothing comes
/// back. Checked against the catalog, so a table added later is covered without editing this.
@Suite struct AccountLifecycleTests {
    /// Every ordinary table of every schema with a `user_id` column, as `label` (partitions
    /// under their partitioned table, as the erasure reports them) and name, with whether it
    /// also has `tenant_id`. Independent of the erasure's own table list.
    static let userTablesSQL = """
        SELECT c.oid::regclass::text AS name,
               CASE WHEN c.relispartition THEN pg_partition_root(c.oid)::regclass::text ELSE c.oid::regclass::text END AS label,
               EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped) AS has_tenant
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind = 'r' AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
          AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'user_id' AND NOT a.attisdropped)
        ORDER BY 1
        """

    struct Scan: Equatable {
        /// Rows of the user per label (non-zero only).
        var rows: [String: Int64] = [:]
        /// A digest of everyone else's rows per table.
        var others: [String: String] = [:]
        var tables: [String] = []
    }

    /// The user's rows in every table found in the catalog, and a digest of every other row.
    static func scan(_ world: SyncWorld, tenant: UUID, user: String) async throws -> Scan {
        try await world.database.withPool(size: 1) { pool in
            try await pool.withConnection { connection in
                var scan = Scan()
                for table in try await connection.query(PGQuery(unsafeSQL: userTablesSQL)).rows {
                    let name = try table.decode("name", as: String.self), label = try table.decode("label", as: String.self)
                    let hasTenant = try table.decode("has_tenant", as: Bool.self)
                    scan.tables.append(name)
                    let mine: PGFragment =
                        hasTenant
                        ? "tenant_id = \(PGFragment.literal(tenant.uuidString.lowercased()))::uuid AND user_id = \(PGFragment.literal(user))"
                        : "user_id = \(PGFragment.literal(user))"
                    let row = try await connection.query(
                        PGQuery(
                            unsafeSQL: """
                                SELECT count(*) FILTER (WHERE \(mine)) AS mine,
                                       coalesce(md5(string_agg(t::text, '|' ORDER BY t::text) FILTER (WHERE NOT (\(mine)))), '') AS others
                                FROM \(name) t
                                """)
                    ).single()
                    let count = try row.decode("mine", as: Int64.self)
                    if count > 0 { scan.rows[label, default: 0] += count }
                    scan.others[name] = try row.decode("others", as: String.self)
                }
                return scan
            }
        }
    }

    @Test func erasureLeavesNoRowOfTheUserInAnyTableAndNothingComesBack() async throws {
        let world = try await SyncWorld.make()
        let (otherTenant, otherKey) = try await world.addTenant("globex")
        let now = Date()
        let env = ["DATABASE_URL": world.database.connectionString]
        try await world.serve { server in
            let alice = try await world.client(server, user: "alice")
            let bob = try await world.client(server, user: "bob")
            let otherAlice = SyncClient(baseURL: server.baseURL, token: try await world.token(user: "alice", tenant: otherTenant, key: otherKey), device: "iphone-A")
            try await AccountFixture.fill(alice, eventDays: 70, now: now)
            try await AccountFixture.fill(bob, eventDays: 40, now: now)
            try await AccountFixture.fill(otherAlice, eventDays: 5, now: now)
            let legacy = LegacyImportTests.fixtures.appendingPathComponent("formation-numeric-dates.json").path
            let imported = try await HabitSyncBinary.run(["import-legacy", "--tenant", "acme", "--user", "alice", legacy], environment: env)
            #expect(imported.status == 0, "\(imported.stderr)")
            // Months that ended more than 10 days ago move to the archive schema.
            let maintenance = try await world.database.withPool(size: 1) { pool in
                try await MaintenanceStore(pool: pool).run(retention: .init(tombstones: 90 * 86_400, pushBatches: 90 * 86_400, conflicts: 90 * 86_400, usageEvents: 10 * 86_400))
            }
            #expect(!maintenance.partitionsArchived.isEmpty)

            let before = try await Self.scan(world, tenant: world.tenant, user: "alice")
            for label in [
                "users", "devices", "habits", "reminders", "daily_progress", "xp_transactions", "achievements", "focus_sessions",
                "selected_apps", "user_settings", "usage_events", "usage_event_ids", "global_streaks", "user_progress", "usage_streaks",
                "push_batches", "conflict_log", "data_migrations", "legacy_import_archive",
            ] {
                #expect((before.rows[label] ?? 0) > 0, "alice has rows in \(label) before")
            }
            #expect(before.rows.keys.contains { $0.hasPrefix("archive.usage_events_") }, "alice has archived usage events: \(before.rows.keys.sorted())")
            print("AccountLifecycleTests: scanned \(before.tables.count) tables with a user_id column: \(before.tables.joined(separator: ", "))")
            print("AccountLifecycleTests: alice's rows before erasure: \(before.rows.keys.sorted().map { "\($0) \(before.rows[$0] ?? 0)" }.joined(separator: ", "))")

            // A dry run counts exactly that and changes nothing.
            let dry = try await HabitSyncBinary.run(["user", "erase", "--tenant", "acme", "--user", "alice", "--dry-run", "--json"], environment: env)
            #expect(dry.status == 0, "\(dry.stderr)")
            let dryReport = try JSONSerialization.jsonObject(with: Data(dry.stdout.utf8)) as? [String: Any]
            #expect((dryReport?["rows"] as? [String: Int])?.mapValues(Int64.init) == before.rows)
            #expect(dryReport?["dryRun"] as? Bool == true)
            #expect(try await Self.scan(world, tenant: world.tenant, user: "alice") == before)

            // The user erases their account from the app.
            let erased = try await TestHTTP.request("DELETE", server.baseURL + "/v1/account", headers: ["Authorization": "Bearer \(alice.token)"])
            #expect(erased.status == 200, "\(erased.text)")
            let report = try erased.json()
            #expect(report["erased"] as? Bool == true)
            #expect((report["rows"] as? [String: Int])?.mapValues(Int64.init) == before.rows)
            #expect(report["total"] as? Int == Int(before.rows.values.reduce(0, +)))
            print("AccountLifecycleTests: DELETE /v1/account answered \(erased.text)")

            let after = try await Self.scan(world, tenant: world.tenant, user: "alice")
            #expect(after.rows.isEmpty, "rows of alice left: \(after.rows)")
            #expect(after.others == before.others, "other users' rows changed")
            #expect(after.tables == before.tables)

            // No marker keeps the user id: erased_users holds a 32-byte hash and nothing else.
            #expect(try await world.count("erased_users") == 1)
            #expect(try await world.count("erased_users", where: "position(convert_to('alice', 'UTF8') in user_hash) = 0 AND octet_length(user_hash) = 32") == 1)

            // An offline device pushes what it still holds: refused, nothing stored.
            let late = try await alice.push([Wire.change("habits", UUID(), at: Wire.at(0), record: Wire.habit())])
            #expect(late.status == 410)
            #expect((late.json["error"] as? JSON)?["code"] as? String == "account_erased")
            #expect(try await alice.pull().status == 410)
            #expect(try await alice.pull().errorCode == "account_erased")
            let export = try await TestHTTP.request("GET", server.baseURL + "/v1/account/export", headers: ["Authorization": "Bearer \(alice.token)"])
            #expect(export.status == 410)
            let stream = try await TestHTTP.request("GET", server.baseURL + "/v1/sync/events", headers: ["Authorization": "Bearer \(alice.token)"])
            #expect(stream.status == 410)
            let imported2 = try await HabitSyncBinary.run(["import-legacy", "--tenant", "acme", "--user", "alice", legacy], environment: env)
            #expect(imported2.status != 0, "an import for an erased user is refused")
            #expect(try await Self.scan(world, tenant: world.tenant, user: "alice").rows.isEmpty)

            // Erasing again finishes nothing more and answers zero rows.
            let again = try await TestHTTP.request("DELETE", server.baseURL + "/v1/account", headers: ["Authorization": "Bearer \(alice.token)"])
            #expect(again.status == 200)
            #expect(try again.json()["total"] as? Int == 0)

            // Analysts' views show nothing of her; bob is still there.
            let views = try await world.database.withPool(size: 1) { pool in
                try await pool.withConnection { connection in
                    try await connection.query("SELECT table_name AS name FROM information_schema.columns WHERE table_schema = 'analytics' AND column_name = 'user_id' ORDER BY 1")
                        .rows.map { try $0.decode("name", as: String.self) }
                }
            }
            #expect(views.count >= 5)
            var bobSeen = 0
            for view in views {
                #expect(try await world.count("analytics.\(view)", where: "user_id = 'alice' AND tenant_id = '\(world.tenant.uuidString.lowercased())'") == 0, "\(view)")
                bobSeen += try await world.count("analytics.\(view)", where: "user_id = 'bob'")
            }
            #expect(bobSeen > 0)

            // An admin lets her start over: an empty account that syncs again, for devices that
            // name its epoch (a push without one could be an old device of the erased account).
            let allowed = try await HabitSyncBinary.run(["user", "allow-again", "--tenant", "acme", "--user", "alice"], environment: env)
            #expect(allowed.status == 0, "\(allowed.stderr)")
            let epoch = try #require(try await alice.pull().json["epoch"] as? String)
            let fresh = try await alice.pushRaw(
                try JSONSerialization.data(withJSONObject: [
                    "batchId": UUID().uuidString, "epoch": epoch, "changes": [Wire.change("habits", UUID(), at: Wire.at(0), record: Wire.habit())],
                ]))
            #expect(fresh.status(0) == "applied")
            #expect(try await alice.pullAll().changes.filter { $0["collection"] as? String == "habits" }.count == 1)
        }
    }

    /// A push that was waiting for the user's lock when the erasure began is refused once it
    /// gets the lock; a push arriving after the erasure began is refused at once, even while
    /// the erasure still waits; nothing of either is stored.
    @Test func pushesRacingAnErasureEitherEndBeforeItOrAreRefused() async throws {
        let world = try await SyncWorld.make()
        // Two replicas: one replica queues a user's pushes behind each other in-process, so the
        // late push comes through the other.
        try await world.serve { server in
            try await world.serve { replica in
                let alice = try await world.client(server, user: "alice")
                let aliceElsewhere = try await world.client(replica, user: "alice")
                try await AccountFixture.fill(alice, eventDays: 2, now: Date())
                let (running, erasure) = try await world.holdingUserLock("alice") {
                    let running = Task {
                        let reply = try await alice.push([Wire.change("habits", UUID(), at: Wire.at(0), record: Wire.habit(name: "in flight"))])
                        #expect(reply.status == 410)
                        return reply.status(0)
                    }
                    try await world.waitForLockWaiters(1)
                    let erasure = Task { try await TestHTTP.request("DELETE", server.baseURL + "/v1/account", headers: ["Authorization": "Bearer \(alice.token)"]) }
                    try await world.waitForLockWaiters(2)
                    // The marker is committed; the erasure waits behind the running push.
                    let late = try await aliceElsewhere.push([Wire.change("habits", UUID(), at: Wire.at(0), record: Wire.habit(name: "late"))])
                    #expect(late.status == 410)
                    return (running, erasure)
                }
                #expect(try await running.value == nil, "answered 410 (no results)")
                let erased = try await erasure.value
                #expect(erased.status == 200)
                #expect((try erased.json()["rows"] as? [String: Int])?["habits"] == 2, "the waiting push stored nothing")
                #expect(try await Self.scan(world, tenant: world.tenant, user: "alice").rows.isEmpty)
            }
        }
    }

    /// Between an erasure's two transactions (its marker committed, its deletion not begun)
    /// the user's row is free: a push that takes its lock at once is refused by the lock's own
    /// statement (`PushStore.lockExistingUserIfFree`), and stores nothing.
    @Test func aPushBetweenAnErasuresMarkerAndItsDeletionIsRefused() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let bob = try await world.client(server, user: "bob")
            #expect(try await bob.push([Wire.change("habits", UUID(), at: Wire.at(0), record: Wire.habit())]).status == 200)
            try await world.database.withPool(size: 1) { pool in
                try await pool.withTransaction { connection in
                    try await RequestScope.set(on: connection, tenantID: world.tenant, userID: "bob")
                    try await connection.query("SELECT habitsync_mark_user_erased(\(world.tenant), 'bob')")
                }
            }
            let late = try await bob.push([Wire.change("habits", UUID(), at: Wire.at(0), record: Wire.habit(name: "late"))])
            #expect(late.status == 410)
            #expect(try await world.count("habits", where: "user_id = 'bob'") == 1, "nothing of the late push")
        }
    }

    @Test func anExportReimportedThroughPushIntoAFreshUserYieldsTheSameRecords() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let alice = try await world.client(server, user: "alice")
            try await AccountFixture.fill(alice, eventDays: 3, now: Date())
            let download = try await TestHTTP.request("GET", server.baseURL + "/v1/account/export", headers: ["Authorization": "Bearer \(alice.token)"])
            #expect(download.status == 200)
            #expect(download.header("Content-Length") == nil, "streamed, not buffered")
            #expect(download.header("Content-Disposition")?.contains("attachment") == true)
            let export = try download.json()
            #expect(export["format"] as? String == "habitsync-export")
            #expect(export["userId"] as? String == "alice")
            let changes = export["changes"] as? [JSON] ?? []
            #expect((export["conflicts"] as? [JSON])?.count == 2, "the superseded and the rejected change")
            #expect((export["devices"] as? [JSON])?.first?["device_id"] as? String == "iphone-A")
            #expect(Set(changes.compactMap { $0["collection"] as? String }) == Set(SyncCollection.allCases.map(\.rawValue)))
            #expect(changes.contains { $0["op"] as? String == "delete" }, "tombstones are exported")

            // Restored as docs/accounts.md says: a fresh user's device pushes every change in
            // export order except the derived records and the server's own writes (updatedBy
            // "server": daily-completion XP here), which the server derives again.
            let derived: Set<String> = ["globalStreak", "userProgress", "usageStreak"]
            func isServers(_ change: JSON) -> Bool { change["updatedBy"] as? String == "server" }
            #expect(changes.contains(where: isServers), "the fill earns daily-completion XP")
            let pushable = changes.filter { !derived.contains($0["collection"] as? String ?? "") && !isServers($0) }.map { change -> JSON in
                var copy: JSON = ["collection": change["collection"]!, "op": change["op"]!, "id": change["id"]!, "updatedAt": change["updatedAt"]!]
                if let record = change["record"] { copy["record"] = record }
                return copy
            }
            let carol = try await world.client(server, user: "carol", device: "restore")
            for start in stride(from: 0, to: pushable.count, by: 20) {
                let reply = try await carol.push(Array(pushable[start..<min(start + 20, pushable.count)]))
                #expect(reply.results.allSatisfy { $0["status"] as? String == "applied" }, "\(reply.results)")
            }
            // The device's records by collection and id (settings by collection: their id is the
            // user's own), the derived records by collection, the server's writes counted.
            func records(_ changes: [JSON]) throws -> [String: String] {
                var out: [String: String] = [:]
                for change in changes {
                    let collection = change["collection"] as? String ?? ""
                    if isServers(change) {
                        out["server's \(collection)", default: ""] += "+"
                        continue
                    }
                    var body: JSON = ["op": change["op"] ?? "", "record": change["record"] ?? NSNull()]
                    if !derived.contains(collection) { body["updatedAt"] = change["updatedAt"] }
                    let key = derived.contains(collection) || collection == "userSettings" ? collection : "\(collection) \(change["id"] ?? "")"
                    out[key] = String(decoding: try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys]), as: UTF8.self)
                }
                return out
            }
            let restored = try await TestHTTP.request("GET", server.baseURL + "/v1/account/export", headers: ["Authorization": "Bearer \(carol.token)"]).json()
            let original = try records(changes), copy = try records(restored["changes"] as? [JSON] ?? [])
            #expect(original.count > 15)
            #expect(copy == original)
        }
    }

    /// The export reads page by page (keyset pages, each its own transaction): one record per
    /// page must give exactly the document one large page gives, in every section.
    @Test func anExportReadOneRecordPerPageIsTheSameDocument() async throws {
        let world = try await SyncWorld.make()
        let now = Date()
        try await world.serve { server in
            try await AccountFixture.fill(try await world.client(server, user: "bob", device: "phone"), eventDays: 40, now: now)
            for device in ["watch", "tablet"] {
                let reply = try await world.client(server, user: "bob", device: device).push([Wire.change("habits", UUID(), at: Wire.at(0), record: Wire.habit(name: device))])
                #expect(reply.status(0) == "applied")
            }
        }
        for fixture in ["formation-numeric-dates.json", "breaking-iso-dates.json"] {
            let path = LegacyImportTests.fixtures.appendingPathComponent(fixture).path
            let imported = try await HabitSyncBinary.run(["import-legacy", "--tenant", "acme", "--user", "bob", path], environment: ["DATABASE_URL": world.database.connectionString])
            #expect(imported.status == 0, "\(imported.stderr)")
        }
        try await world.database.withPool(size: 2) { pool in
            let report = try await MaintenanceStore(pool: pool).run(retention: .init(tombstones: 90 * 86_400, pushBatches: 90 * 86_400, conflicts: 90 * 86_400, usageEvents: 10 * 86_400))
            #expect(!report.partitionsArchived.isEmpty)
            func export(pageSize: Int) async throws -> (String, AccountStore.ExportSummary) {
                var text = ""
                let summary = try await AccountStore(pool: pool, statementTimeout: ServerConfiguration.forTests.statementTimeout, exportPageSize: pageSize).export(
                    tenant: world.tenant, user: "bob", now: now
                ) { text += $0 }
                return (text, summary)
            }
            let (whole, summary) = try await export(pageSize: 1000)
            let (paged, pagedSummary) = try await export(pageSize: 1)
            #expect(paged == whole)
            #expect(pagedSummary == summary)
            for section in ["conflicts", "devices", "pushBatches", "legacyImports", "dataMigrations"] {
                #expect((summary.sections[section] ?? 0) >= 2, "\(section): \(summary.sections)")
            }
            #expect((summary.sections["changes"] ?? 0) > 40, "\(summary.sections)")
            let document = try JSONSerialization.jsonObject(with: Data(whole.utf8)) as? JSON
            let changes = document?["changes"] as? [JSON] ?? []
            #expect(changes.count == summary.sections["changes"])
            // Settings and the derived records share the user's id, so a record is its collection and id.
            #expect(Set(changes.map { "\($0["collection"] ?? "") \($0["id"] ?? "")" }).count == changes.count, "no record twice")
            // Archived events are there: 40 events in all, some in archived months.
            #expect(changes.filter { $0["collection"] as? String == "usageEvents" }.count == 40)
            #expect(try await world.count("usage_events", where: "user_id = 'bob'") < 40)

            // Through the API, as the request role (which cannot read the archive schema
            // itself): the same records.
            try await world.serve { server in
                let bob = try await world.client(server, user: "bob")
                let download = try await TestHTTP.request("GET", server.baseURL + "/v1/account/export", headers: ["Authorization": "Bearer \(bob.token)"])
                #expect(download.status == 200)
                let viaAPI = try download.json()["changes"] as? [JSON] ?? []
                func keyed(_ changes: [JSON]) throws -> Set<String> {
                    Set(try changes.map { String(decoding: try JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys]), as: UTF8.self) })
                }
                #expect(viaAPI.count == changes.count)
                #expect(try keyed(viaAPI) == keyed(changes))
            }
        }
    }

    @Test func theRequestRoleCanEraseAndReadOnlyTheUserOfItsScope() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            try await AccountFixture.fill(try await world.client(server, user: "bob"), eventDays: 2, now: Date())
        }
        let before = try await Self.scan(world, tenant: world.tenant, user: "bob")
        try await world.database.withPool(size: 1, role: "habitsync_app") { pool in
            try await pool.withTransaction { connection in
                try await RequestScope.set(on: connection, tenantID: world.tenant, userID: "alice")
                await #expect(throws: PGError.self) {
                    try await connection.query("SELECT * FROM habitsync_erase(\(world.tenant), \("bob"), false)")
                }
            }
            try await pool.withTransaction { connection in
                try await RequestScope.set(on: connection, tenantID: world.tenant, userID: "alice")
                await #expect(throws: PGError.self) { try await connection.query("SELECT * FROM habitsync_erase(\(world.tenant), NULL, false)") }
            }
            try await pool.withTransaction { connection in
                try await RequestScope.set(on: connection, tenantID: world.tenant, userID: "alice")
                await #expect(throws: PGError.self) { try await connection.query("SELECT habitsync_allow_user_again(\(world.tenant), \("alice"))") }
            }
            try await pool.withTransaction { connection in
                try await RequestScope.set(on: connection, tenantID: world.tenant, userID: "alice")
                await #expect(throws: PGError.self) { try await connection.query("SELECT * FROM erasure_keys") }
            }
            // The export's reader of archived events: only the caller's, only archived partitions.
            for (user, relation) in [("bob", "usage_events_2026_11"), ("alice", "habits"), ("alice", "users")] {
                try await pool.withTransaction { connection in
                    try await RequestScope.set(on: connection, tenantID: world.tenant, userID: "alice")
                    await #expect(throws: PGError.self, "\(user) \(relation)") {
                        try await connection.query("SELECT * FROM habitsync_archived_usage_events(\(world.tenant), \(user), \(relation)::regclass, 0, 10)")
                    }
                }
            }
        }
        #expect(try await Self.scan(world, tenant: world.tenant, user: "bob") == before)
    }

    @Test func adminsExportEraseAndEraseTenantsFromTheCommandLine() async throws {
        let world = try await SyncWorld.make()
        let (otherTenant, otherKey) = try await world.addTenant("globex")
        let env = ["DATABASE_URL": world.database.connectionString]
        let directory = try makeTemporaryDirectory("habitsync-export")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await world.serve { server in
            let bob = try await world.client(server, user: "bob")
            try await AccountFixture.fill(bob, eventDays: 3, now: Date())
            let other = SyncClient(baseURL: server.baseURL, token: try await world.token(user: "dana", tenant: otherTenant, key: otherKey), device: "iphone-A")
            try await AccountFixture.fill(other, eventDays: 3, now: Date())

            // user export: the API's document, counts printed.
            let file = directory.appendingPathComponent("bob.json").path
            let exported = try await HabitSyncBinary.run(["user", "export", "--tenant", "acme", "--user", "bob", "--output", file], environment: env)
            #expect(exported.status == 0, "\(exported.stderr)")
            #expect(exported.stdout.contains("conflicts 2"), "\(exported.stdout)")
            let fromCLI = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? JSON
            let fromAPI = try await TestHTTP.request("GET", server.baseURL + "/v1/account/export", headers: ["Authorization": "Bearer \(bob.token)"]).json()
            #expect((fromCLI?["changes"] as? [JSON])?.count == (fromAPI["changes"] as? [JSON])?.count)
            #expect((fromCLI?["changes"] as? [JSON])?.count ?? 0 > 10)

            // tenant erase: a dry run changes nothing; then every row of the tenant goes.
            let before = try await Self.scan(world, tenant: otherTenant, user: "dana")
            let dry = try await HabitSyncBinary.run(["tenant", "erase", "globex", "--dry-run"], environment: env)
            #expect(dry.status == 0, "\(dry.stderr)")
            #expect(dry.stdout.contains("dry run: nothing changed"))
            #expect(try await Self.scan(world, tenant: otherTenant, user: "dana") == before)
            let erased = try await HabitSyncBinary.run(["tenant", "erase", "globex", "--json"], environment: env)
            #expect(erased.status == 0, "\(erased.stderr)")
            let report = try JSONSerialization.jsonObject(with: Data(erased.stdout.utf8)) as? JSON
            let rows = report?["rows"] as? [String: Int] ?? [:]
            #expect(rows["tenants"] == 1 && rows["tenant_keys"] == 1 && rows["users"] == 1)
            let after = try await Self.scan(world, tenant: otherTenant, user: "dana")
            #expect(after.rows.isEmpty)
            #expect(try await world.count("tenants", where: "id = '\(otherTenant.uuidString.lowercased())'") == 0)
            // A token verified with a key cached before the erasure is refused with nothing stored.
            let cached = try await other.push([Wire.change("habits", UUID(), at: Wire.at(0), record: Wire.habit())])
            #expect(cached.status == 410 || cached.status == 401, "\(cached.status)")
            #expect(try await Self.scan(world, tenant: otherTenant, user: "dana").rows.isEmpty)
            // acme's bob is untouched.
            #expect(try await bob.pull().status == 200)
            #expect(try await world.count("habits", where: "user_id = 'bob'") == 2)

            // user erase, as an admin: the same erasure as DELETE /v1/account.
            let carol = try await world.client(server, user: "carol")
            try await AccountFixture.fill(carol, eventDays: 2, now: Date())
            let carolBefore = try await Self.scan(world, tenant: world.tenant, user: "carol")
            let erasedCarol = try await HabitSyncBinary.run(["user", "erase", "--tenant", "acme", "--user", "carol", "--json"], environment: env)
            #expect(erasedCarol.status == 0, "\(erasedCarol.stderr)")
            let carolReport = try JSONSerialization.jsonObject(with: Data(erasedCarol.stdout.utf8)) as? JSON
            #expect((carolReport?["rows"] as? [String: Int])?.mapValues(Int64.init) == carolBefore.rows)
            #expect(try await Self.scan(world, tenant: world.tenant, user: "carol").rows.isEmpty)
            #expect(try await carol.push([Wire.change("habits", UUID(), at: Wire.at(0), record: Wire.habit())]).status == 410)
            let again = try await HabitSyncBinary.run(["user", "erase", "--tenant", "acme", "--user", "carol"], environment: env)
            #expect(again.stdout.contains("erased 0 rows"), "\(again.stdout)")
        }
        // A server that never saw the tenant's keys: its tokens no longer verify.
        try await world.serve { server in
            let token = try await world.token(user: "dana", tenant: otherTenant, key: otherKey)
            let reply = try await TestHTTP.request("GET", server.baseURL + "/v1/sync/pull", headers: ["Authorization": "Bearer \(token)"])
            #expect(reply.status == 401)
        }
    }
}
