import Foundation
import GRDB
import HabitSyncClient
import HabitSyncDomain
import HabitSyncStore
import LibPQClient
import ServerHarness
import SyncTestSupport
import TestSupport
import Testing

/// Devices prove they hold what the server holds (protocol.md, "Epochs" and "Digests"): a
/// cursor or event id ahead of the user's counter, a push or pull from another epoch, an old
/// device of an erased account, a restored backup, and a copy altered on either side are each
/// found and settled, against the real server, PostgreSQL and the SDK.
@Suite struct SyncEpochTests {
    /// For the operator's `user allow-again`, a write to a reference table: on the Citus test
    /// cluster, busy creating a database per test, it can wait longer than a request may.
    static let adminTimeout: Duration = .seconds(60)

    static func engine(_ store: LocalStore, _ server: RunningServer, token: String) throws -> SyncEngine {
        guard let base = URL(string: server.baseURL + "/") else { throw SyncProtocolError.malformedResponse }
        var engine = SyncEngine(store: store, baseURL: base, transport: URLSessionTransport.patient()) { token }
        engine.log = { _ in }
        return engine
    }

    static func errorField(_ json: JSON, _ name: String) -> Any? { (json["error"] as? JSON)?[name] }

    static func counter(_ world: SyncWorld, _ user: String = "ada") async throws -> Int64 {
        try await world.database.withPool(size: 1) { pool in
            try await pool.withConnection { connection in
                try await connection.query("SELECT change_counter FROM users WHERE user_id = \(user)").single().decode("change_counter", as: Int64.self)
            }
        }
    }

    @Test func cursorsAndEventIDsAheadOfTheCounterAreRefusedWithWhatTheServerHolds() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let ada = try await world.client(server, user: "ada")
            let habits = (0..<3).map { _ in UUID() }
            #expect(try await ada.push(habits.map { Wire.change("habits", $0, at: Wire.at(0), record: Wire.habit()) }).status == 200)
            let counter = try await Self.counter(world)
            let last = try await ada.pullAll()
            let epochText = try await ada.pull(cursor: last.cursor).json["epoch"] as? String
            let epoch = try #require(epochText.flatMap(SyncEpoch.init))
            #expect(epoch.account != nil)

            let ahead = Int64(900_000_000)
            let cursors = [
                "v1": Data("v1:\(ahead)".utf8).base64EncodedString(),
                "v2": PullCursor(version: ahead).text,
                "v3": PullCursor(version: ahead, epoch: epoch).text,
                "initial sync": PullCursor(version: 1, initialSyncFloor: ahead, epoch: epoch).text,
            ]
            for (kind, cursor) in cursors.sorted(by: { $0.key < $1.key }) {
                let page = try await ada.pull(cursor: cursor.replacingOccurrences(of: "=", with: ""))
                #expect(page.status == 410 && page.errorCode == "reset_required", "\(kind): \(page.status) \(page.json)")
                #expect(Self.errorField(page.json, "highWaterMark") as? Int == Int(counter), "\(kind)")
                #expect(Self.errorField(page.json, "epoch") as? String == epoch.text, "\(kind)")
            }
            // At the counter: the normal empty answer.
            let current = try await ada.pull(cursor: PullCursor(version: counter, epoch: epoch).text)
            #expect(current.status == 200 && current.changes.isEmpty)

            let stream = try await ada.client.send("GET", "/v1/sync/events", headers: ["Last-Event-ID": String(ahead)])
            let streamAnswer = try stream.json()
            #expect(stream.status == 410 && Self.errorField(streamAnswer, "code") as? String == "reset_required")

            // Another database epoch (a restore this device missed): the whole push is refused.
            let otherDatabase = try #require(SyncEpoch(database: "0123456789abcdef", account: epoch.account))
            let restoredPush = try await ada.pushRaw(
                try JSONSerialization.data(withJSONObject: [
                    "batchId": UUID().uuidString, "epoch": otherDatabase.text,
                    "changes": [Wire.change("habits", UUID(), at: Wire.at(1), record: Wire.habit())],
                ]))
            #expect(restoredPush.status == 410 && Self.errorField(restoredPush.json, "code") as? String == "reset_required")
            #expect(Self.errorField(restoredPush.json, "highWaterMark") as? Int == 0, "never rotated: nothing is known to be held")
            let stalePull = try await ada.pull(cursor: PullCursor(version: 1, epoch: otherDatabase).text)
            #expect(stalePull.status == 410 && stalePull.errorCode == "reset_required")
            // Not an epoch at all: a 400 naming the field.
            let forged = try await ada.pushRaw(try JSONSerialization.data(withJSONObject: ["batchId": UUID().uuidString, "epoch": "../../etc", "changes": []]))
            #expect(forged.status == 400 && Self.errorField(forged.json, "field") as? String == "epoch")
            #expect(try await ada.pull(cursor: Data("v3:1:-:fff:zz".utf8).base64EncodedString()).errorCode == "invalid_parameter")
            #expect(try await world.count("habits") == 3, "nothing of the refused pushes was stored")
            #expect(try await Self.counter(world) == counter)
        }
    }

    @Test func anOldDeviceOfAnErasedAccountAllowedAgainBringsNothingBack() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let token = try await world.token(user: "ada")
            let phone = try Self.engine(try LocalStore(path: nil, deviceID: "phone"), server, token: token)
            let watch = try Self.engine(try LocalStore(path: nil, deviceID: "watch"), server, token: token)
            for name in ["Read", "Run", "Stretch"] { _ = try phone.store.save(Habit(name: name, startDate: ClientSDKTests.day)) }
            _ = try await phone.sync()
            _ = try await watch.sync()
            let oldEpoch = try #require(try phone.store.syncEpoch())

            _ = try await watch.deleteAccount()
            let allowed = try await world.database.withPool(size: 1) { try await AccountStore(pool: $0, statementTimeout: Self.adminTimeout).allowAgain(tenant: world.tenant, user: "ada") }
            #expect(allowed)
            #expect(try await world.count("habits") == 0)

            // The old phone replays a batch of the old account as it was: refused whole.
            let replay = try await world.client(server, user: "ada", device: "phone").pushRaw(
                try JSONSerialization.data(withJSONObject: [
                    "batchId": UUID().uuidString, "epoch": oldEpoch,
                    "changes": [Wire.change("habits", UUID(), at: Wire.at(0), record: Wire.habit())],
                ]))
            #expect(replay.status == 410 && Self.errorField(replay.json, "code") as? String == "account_restarted")

            // The SDK on the old phone, with an offline edit too: everything of the old account goes.
            _ = try phone.store.save(Habit(name: "Offline edit", startDate: ClientSDKTests.day))
            let report = try await phone.sync()
            // Three habits, the three derived records, the offline edit.
            #expect(report.timelineEvents == [.accountRestarted(discarded: 7)])
            #expect(try phone.store.fetchAll(Habit.self).isEmpty && (try phone.store.pendingCount()) == 0)
            #expect(try await world.count("habits") == 0, "nothing of the erased account came back")
            #expect(try phone.store.syncEpoch() != oldEpoch)

            // The account itself works: a new habit from the phone reaches the watch, which
            // also starts over.
            _ = try phone.store.save(Habit(name: "New start", startDate: ClientSDKTests.day))
            _ = try await phone.sync()
            let watchReport = try await watch.sync()
            #expect(watchReport.timelineEvents == [.accountRestarted(discarded: 6)])
            #expect(try watch.store.fetchAll(Habit.self).map(\.value.name) == ["New start"])
            #expect(try await world.count("habits") == 1)
        }
    }

    /// Issue 44: after `user allow-again`, a device that sends no epoch (an app from before
    /// epochs replaying its pre-erasure batch) is refused with `account_restarted` and brings
    /// nothing back; a new SDK device that never synced learns the epoch from that answer and
    /// keeps and sends its records; an allow-again before the erasure finished is refused.
    @Test func aPushWithoutAnEpochBringsNothingErasedBack() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let ada = try await world.client(server, user: "ada", device: "old-phone")
            let habits = (0..<3).map { _ in Wire.change("habits", UUID(), at: Wire.at(0), record: Wire.habit()) }
            let oldBatch = try JSONSerialization.data(withJSONObject: ["batchId": UUID().uuidString, "changes": habits])
            #expect(try await ada.pushRaw(oldBatch).status(0) == "applied")
            let erased = try await ada.client.send("DELETE", "/v1/account")
            #expect(erased.status == 200)
            let allowed = try await world.database.withPool(size: 1) { try await AccountStore(pool: $0, statementTimeout: Self.adminTimeout).allowAgain(tenant: world.tenant, user: "ada") }
            #expect(allowed)

            // The old app replays its batch as it was, and sends it again under a new id.
            let replay = try await ada.pushRaw(oldBatch)
            #expect(replay.status == 410 && Self.errorField(replay.json, "code") as? String == "account_restarted", "\(replay.json)")
            let resent = try await ada.push(habits)
            #expect(resent.status == 410 && Self.errorField(resent.json, "code") as? String == "account_restarted")
            let epoch = try #require(Self.errorField(resent.json, "epoch") as? String)
            #expect(try await world.count("habits") == 0, "nothing of the erased account came back")
            // A pull without a cursor is how a new device starts: it is answered, with the epoch.
            let first = try await ada.pull()
            #expect(first.status == 200 && first.json["epoch"] as? String == epoch)

            // A new phone that never synced, with habits made offline: nothing is discarded.
            let phone = try Self.engine(try LocalStore(path: nil, deviceID: "new-phone"), server, token: try await world.token(user: "ada"))
            for name in ["Read", "Run"] { _ = try phone.store.save(Habit(name: name, startDate: ClientSDKTests.day)) }
            let report = try await phone.sync()
            #expect(report.timelineEvents.isEmpty, "\(report.timelineEvents)")
            #expect(report.pushed.applied == 2)
            #expect(try await world.count("habits") == 2)
            #expect(try phone.store.syncEpoch() == epoch)

            // An erasure that has not finished (its marker, but not its deletions) cannot be
            // allowed again: the account would not start empty.
            let bob = try await world.client(server, user: "bob")
            #expect(try await bob.push([Wire.change("habits", UUID(), at: Wire.at(0), record: Wire.habit())]).status(0) == "applied")
            try await world.database.withPool(size: 1) { pool in
                try await pool.withTransaction { connection in
                    try await RequestScope.set(on: connection, tenantID: world.tenant, userID: "bob")
                    try await connection.query("SELECT habitsync_mark_user_erased(\(world.tenant), 'bob')")
                }
            }
            let refusal = await #expect(throws: PGError.self) {
                try await world.database.withPool(size: 1) { try await AccountStore(pool: $0, statementTimeout: Self.adminTimeout).allowAgain(tenant: world.tenant, user: "bob") }
            }
            #expect(refusal?.message.contains("has not finished") == true, "\(String(describing: refusal))")
            #expect(try await bob.push([Wire.change("habits", UUID(), at: Wire.at(1), record: Wire.habit())]).status == 410, "the marker is still there")
        }
    }

    /// The scenario with SDK devices: back up, sync on, restore, rotate, serve. Every
    /// device converges and every write a device held is on the restored server.
    @Test(.disabled(if: TestPostgres.onCitus, "a Citus cluster is not backed up as one pg_dump"))
    func aRestoredBackupLosesNoWriteADeviceHeld() async throws {
        let world = try await SyncWorld.make()
        let token = try await world.token(user: "ada")
        let stores = try ["phone", "watch", "tablet"].map { try LocalStore(path: nil, deviceID: $0) }
        let today = LocalDate(Date(), in: TimeZone(identifier: "UTC") ?? .current)
        let (backup, habits) = try await world.serve { server in
            let devices = try stores.map { try Self.engine($0, server, token: token) }
            var habits = try (0..<5).map { try devices[0].store.save(Habit(name: "Before \($0)", startDate: ClientSDKTests.day)).id }
            for device in devices { _ = try await device.sync() }
            let backup = try await TestPostgres.shared.backUp(world.database)

            // After the backup: every device writes, and all of them sync twice (each holds all).
            habits += try (0..<5).map { try devices[0].store.save(Habit(name: "After \($0)", startDate: ClientSDKTests.day)).id }
            var renamed = try #require(try devices[1].store.fetch(Habit.self, id: habits[0])).value
            renamed.name = "Renamed after the backup"
            _ = try devices[1].store.save(renamed, id: habits[0])
            try devices[2].store.addProgress(habitId: habits[1], date: today, goalCount: 1)
            try devices[2].store.addProgress(habitId: habits[1], date: today, goalCount: 1)
            try devices[0].store.delete(Habit.self, id: habits[4])
            for _ in 0..<2 { for device in devices { _ = try await device.sync() } }
            // And one edit the old server never saw.
            var offline = try #require(try devices[1].store.fetch(Habit.self, id: habits[2])).value
            offline.name = "Offline during the restore"
            _ = try devices[1].store.save(offline, id: habits[2])
            return (backup, habits)
        }

        let restored = try await TestPostgres.shared.restore(backup)
        try? FileManager.default.removeItem(at: backup.file.deletingLastPathComponent())
        let rotation = try await HabitSyncBinary.run(["epoch", "rotate"], environment: ["DATABASE_URL": restored.connectionString])
        #expect(rotation.status == 0 && rotation.stdout.contains("1 users"), "\(rotation.stdout) \(rotation.stderr)")
        let after = SyncWorld(database: restored, tenant: world.tenant, key: world.key)
        #expect(try await after.count("habits", where: "deleted_at IS NULL") == 5, "the backup holds the first five")

        try await after.serve { server in
            let devices = try stores.map { try Self.engine($0, server, token: token) }
            var requeued: [Int] = []
            for device in devices {
                let report = try await device.sync()
                for case .serverRestored(_, let count) in report.timelineEvents { requeued.append(count) }
            }
            #expect(requeued.count == 3, "each device was told once: \(requeued)")
            for _ in 0..<2 { for device in devices { _ = try await device.sync() } }

            let server = try await after.client(server, user: "ada").state()
            let live = server.values.filter { $0["collection"] as? String == "habits" && $0["op"] as? String == "upsert" }
            let names = Dictionary(uniqueKeysWithValues: live.map { ($0["id"] as? String ?? "", ($0["record"] as? JSON)?["name"] as? String ?? "") })
            #expect(names.count == 9, "ten habits, one deleted after the backup: \(names.values.sorted())")
            #expect(names[habits[0].uuidString.lowercased()] == "Renamed after the backup")
            #expect(names[habits[2].uuidString.lowercased()] == "Offline during the restore")
            #expect(names[habits[4].uuidString.lowercased()] == nil, "the delete made after the backup holds")
            #expect(try await after.count("daily_progress", where: "progress_count = 2") == 1, "both completions after the backup")
            for device in devices {
                #expect(try device.store.pendingCount() == 0)
                let held = try device.store.fetchAll(Habit.self)
                #expect(Dictionary(uniqueKeysWithValues: held.map { ($0.id.uuidString.lowercased(), $0.value.name) }) == names, "\(device.store.deviceID)")
                #expect(try device.store.progress(habitId: habits[1], date: today)?.value.progressCount == 2)
                #expect(try await device.sync().timelineEvents.isEmpty, "converged: a further sync finds nothing to repair")
            }
            print("restore: backup held 5 habits; devices re-pushed \(requeued) records; restored server now holds \(names.count) live habits, progress 2; 3 devices equal")
        }
    }

    @Test func aCopyAlteredOnEitherSideIsFoundByTheDigestAndRepaired() async throws {
        let world = try await SyncWorld.make()
        let directory = try makeTemporaryDirectory("habitsync-digest")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await world.serve { server in
            let token = try await world.token(user: "ada")
            let file = directory.appendingPathComponent("watch.sqlite").path
            let phone = try Self.engine(try LocalStore(path: nil, deviceID: "phone"), server, token: token)
            let watch = try Self.engine(try LocalStore(path: file, deviceID: "watch"), server, token: token)
            let habits = try (0..<5).map { try phone.store.save(Habit(name: "Habit \($0)", startDate: ClientSDKTests.day)).id }
            _ = try await phone.sync()
            #expect(try await watch.sync().timelineEvents.isEmpty)
            #expect(try await phone.sync().timelineEvents.isEmpty, "an unaltered copy matches")

            // The watch's SQLite, behind the SDK's back: a record gone, one that never existed.
            let phantom = UUID()
            let sqlite = try DatabaseQueue(path: file)
            try await sqlite.write { db in
                try db.execute(sql: "DELETE FROM records WHERE collection = 'habits' AND id = ?", arguments: [habits[0].uuidString.lowercased()])
                try db.execute(
                    sql: """
                        INSERT INTO records (collection, id, record, updated_at_ms, updated_by, sync_status, server_version)
                        SELECT collection, ?, record, updated_at_ms, updated_by, 'synced', server_version FROM records WHERE collection = 'habits' LIMIT 1
                        """, arguments: [phantom.uuidString.lowercased()])
            }
            try sqlite.close()
            let repaired = try await watch.sync()
            #expect(repaired.timelineEvents == [.repaired(collections: [.habits], persisted: false)])
            #expect(Set(try watch.store.fetchAll(Habit.self).map(\.id)) == Set(habits))

            // The server's table, behind the server's back (an operator's DELETE in psql).
            try await world.database.withPool(size: 1) { pool in
                try await pool.withConnection { connection in
                    try await connection.query("ALTER TABLE habits NO FORCE ROW LEVEL SECURITY")
                    try await connection.query("DELETE FROM habits WHERE id = \(habits[1])")
                    try await connection.query("ALTER TABLE habits FORCE ROW LEVEL SECURITY")
                }
            }
            for device in [phone, watch] {
                #expect(try await device.sync().timelineEvents == [.repaired(collections: [.habits], persisted: false)])
                #expect(Set(try device.store.fetchAll(Habit.self).map(\.id)) == Set(habits.dropFirst(2) + [habits[0]]))
                #expect(try await device.sync().timelineEvents.isEmpty)
            }
        }
    }

    /// The digest the triggers keep equals one computed from scratch, in SQL and in Swift over
    /// the pulled records, after inserts, updates, deletes, derived records and a purge.
    @Test func theKeptDigestEqualsOneComputedFromScratch() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let ada = try await world.client(server, user: "ada")
            let habits = (0..<6).map { _ in UUID() }
            _ = try await ada.push(
                habits.map { Wire.change("habits", $0, at: Wire.at(0), record: Wire.habit()) }
                    + [
                        Wire.change("xpTransactions", UUID(), at: Wire.at(0), record: Wire.xp()),
                        Wire.change("dailyProgress", UUID(), at: Wire.at(0), record: Wire.progress(habit: habits[0])),
                    ])
            _ = try await ada.push([
                Wire.change("habits", habits[1], at: Wire.at(5), record: Wire.habit(name: "Renamed")),
                Wire.change("habits", habits[2], at: Wire.at(5), record: nil),
            ])
            let changes = try await ada.pullAll().changes
            var fromPull: [String: RecordDigest] = [:]
            for change in changes where change["op"] as? String == "upsert" {
                guard let collection = change["collection"] as? String, collection != "usageEvents",
                    let id = (change["id"] as? String).flatMap(UUID.init(uuidString:)), let version = (change["serverVersion"] as? Int).map(Int64.init)
                else { continue }
                fromPull[collection, default: RecordDigest()].add(id: id, serverVersion: version)
            }
            let last = try await ada.pull(cursor: try await ada.pullAll().cursor)
            let reported = try #require(last.json["digests"] as? [String: JSON])
            for collection in PullStore.digestedCollections {
                let expected = fromPull[collection.rawValue] ?? RecordDigest()
                #expect(reported[collection.rawValue]?["count"] as? Int == Int(expected.count), "\(collection)")
                #expect(reported[collection.rawValue]?["hash"] as? String == expected.hashText, "\(collection)")
            }
            #expect(fromPull["habits"]?.count == 5 && fromPull["globalStreak"]?.count == 1)

            let fromScratch = try await world.database.withPool(size: 1) { pool in
                try await pool.withConnection { connection in
                    try await connection.query("ALTER TABLE habits NO FORCE ROW LEVEL SECURITY")
                    let row = try await connection.query(
                        """
                        SELECT count(*) AS n, coalesce(bit_xor(habitsync_digest_term(id, server_version)), 0) AS x
                        FROM habits WHERE user_id = 'ada' AND deleted_at IS NULL
                        """
                    ).single()
                    return RecordDigest(count: try row.decode("n", as: Int64.self), hash: UInt64(bitPattern: try row.decode("x", as: Int64.self)))
                }
            }
            #expect(fromScratch == fromPull["habits"])
        }
    }
}
