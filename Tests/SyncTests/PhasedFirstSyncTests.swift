import Foundation
import FoundationNetworking
import HabitSyncClient
import HabitSyncDomain
import HabitSyncServer
import LibPQClient
import ServerHarness
import SyncTestSupport
import Synchronization
import TestSupport
import Testing

/// Issue 49: a first sync sends the main screen's records first, says how far it has come,
/// and misses or repeats nothing across its phases and the pulls after it, also while other
/// devices write; a device with a rolling window never receives older records and checks
/// what it holds with digests of the window. Against the real server and PostgreSQL.
@Suite struct PhasedFirstSyncTests {
    /// Records dated at most this many days ago are certainly recent (the recent phase is 35
    /// days), those at least `oldFrom` days ago certainly history, whichever day the server
    /// calls today in the user's zone: the tests date nothing in between.
    static let recentUpTo = 30
    static let oldFrom = 40

    static func key(_ change: JSON) -> String { "\(change["collection"] as? String ?? "?")/\(change["id"] as? String ?? "?")" }

    /// The day a pulled change is dated by, in days before `today`; nil: not dated (or a tombstone).
    static func daysAgo(_ change: JSON, today: LocalDate) -> Int? {
        guard let record = change["record"] as? JSON else { return nil }
        if let text = record["date"] as? String, let day = LocalDate(text) { return today.dayNumber - day.dayNumber }
        for field in ["timestamp", "startTime"] {
            if let text = record[field] as? String, let time = WireTime.parse(text) {
                return today.dayNumber - LocalDate(time, in: .gmt).dayNumber
            }
        }
        return nil
    }

    /// Noon UTC of `day`, or now when that is later (today before noon): a time of that day
    /// the server takes (run between midnight and noon UTC, today's noon was refused as in
    /// the future, `timestamp_in_future`).
    static func noon(_ day: LocalDate) -> String { WireTime.format(min(Date(timeIntervalSince1970: Double(day.dayNumber) * 86_400 + 43_200), Date())) }

    /// A user with a habit, progress on the recent and the old days, usage events and XP:
    /// the recent records first, the old ones after (so versions do not follow the days).
    static func fill(_ device: SyncClient, today: LocalDate, oldDays: Int = 80) async throws -> (recent: Int, old: Int) {
        let habit = UUID()
        let recentDays = (0...recentUpTo).map { today.adding(days: -$0) }
        let oldDays = (oldFrom..<(oldFrom + oldDays)).map { today.adding(days: -$0) }
        func dated(_ days: [LocalDate]) -> [JSON] {
            days.flatMap { day -> [JSON] in
                var event = Wire.usageEvent()
                event["timestamp"] = noon(day)
                return [
                    Wire.change("dailyProgress", UUID(), at: Wire.at(0), record: Wire.progress(habit: habit, date: day.description)),
                    Wire.change("usageEvents", UUID(), at: Wire.at(0), record: event),
                ]
            }
        }
        var recent = [Wire.change("habits", habit, at: Wire.at(0), record: Wire.habit())] + dated(recentDays)
        var xp = Wire.xp()
        xp["timestamp"] = noon(today)
        recent.append(Wire.change("xpTransactions", UUID(), at: Wire.at(0), record: xp))
        var old = dated(oldDays)
        xp["timestamp"] = noon(today.adding(days: -(oldFrom + 5)))
        old.append(Wire.change("xpTransactions", UUID(), at: Wire.at(0), record: xp))
        // An award written today for an old day (a backfill, an import) is dated by its day.
        xp["timestamp"] = noon(today)
        xp["date"] = today.adding(days: -(oldFrom + 6)).description
        old.append(Wire.change("xpTransactions", UUID(), at: Wire.at(0), record: xp))
        for batch in [recent, old] {
            let reply = try await device.push(batch)
            #expect(reply.results.allSatisfy { $0["status"] as? String == "applied" }, "\(reply.results.filter { $0["status"] as? String != "applied" }.prefix(3))")
        }
        return (recent.count, old.count)
    }

    struct Page {
        let changes: [JSON]
        let phase: String
        let remaining: Int
        let later: Int
        let hasMore: Bool
        let json: JSON
    }

    static func page(_ device: SyncClient, cursor: String?, limit: Int, extra: String = "") async throws -> Page {
        let reply = try await device.pull(cursor: cursor, limit: limit, extra: extra)
        #expect(reply.status == 200, "\(reply.json)")
        let progress = reply.json["progress"] as? JSON ?? [:]
        return Page(
            changes: reply.changes, phase: progress["phase"] as? String ?? "?", remaining: progress["remaining"] as? Int ?? -1,
            later: progress["later"] as? Int ?? -1, hasMore: reply.hasMore, json: reply.json)
    }

    @Test func aFirstSyncSendsTheMainScreenFirstAndEveryRecordOnce() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let device = try await world.client(server, user: "veteran")
            let today = LocalDate(Date(), in: .gmt)
            let pushed = try await Self.fill(device, today: today)

            var pages: [Page] = []
            var cursor: String?
            repeat {
                let page = try await Self.page(device, cursor: cursor, limit: 20)
                pages.append(page)
                cursor = page.json["cursor"] as? String
            } while pages.last?.hasMore == true && pages.count < 100
            let stream = pages.flatMap(\.changes)

            // Every record once; the pushed ones and the derived records the server keeps.
            let keys = stream.map(Self.key)
            #expect(Set(keys).count == keys.count, "a record came twice")
            let derived = stream.filter { ["globalStreak", "usageStreak", "userProgress"].contains($0["collection"] as? String ?? "") }.count
            #expect(stream.count == pushed.recent + pushed.old + derived)

            // The main screen's records all come before the old ones: none in a page after the
            // first page holding an old record (which ends the recent phase), and every page
            // holding an old record says it reached the history. Each page in ascending versions.
            let pageOf = pages.enumerated().flatMap { index, page in page.changes.map { _ in index } }
            let ages = stream.map { Self.daysAgo($0, today: today) }
            let firstOldPage = pageOf[try #require(ages.firstIndex { ($0 ?? 0) >= Self.oldFrom })]
            let lastRecentPage = pageOf[try #require(ages.lastIndex { ($0 ?? 0) <= Self.recentUpTo })]
            #expect(lastRecentPage <= firstOldPage, "a recent record came after an old one's page")
            #expect(pages[firstOldPage...].allSatisfy { $0.phase == "history" })
            #expect(pages[..<firstOldPage].allSatisfy { $0.phase == "recent" })
            for page in pages {
                let versions = page.changes.map { $0["serverVersion"] as? Int ?? 0 }
                #expect(versions == versions.sorted() && Set(versions).count == versions.count, "a page's versions ascend")
            }
            let recentRecords = ages.filter { ($0 ?? 0) <= Self.recentUpTo }.count
            #expect(recentRecords == pushed.recent + derived)

            // Phases only move forward: recent, then history, which the last page completes.
            let order = ["recent", "history"]
            let phases = pages.map(\.phase)
            #expect(phases.allSatisfy(order.contains), "\(phases)")
            #expect(phases == phases.sorted { order.firstIndex(of: $0) ?? 0 < order.firstIndex(of: $1) ?? 0 })
            #expect(phases.first == "recent" && phases.last == "history")
            // Progress: the first page counts what is left exactly (no write in between), and
            // every page counts down.
            let first = try #require(pages.first)
            #expect(first.remaining + first.changes.count == pushed.recent + derived)
            #expect(first.later == pushed.old)
            var sent = 0
            for page in pages {
                sent += page.changes.count
                if page.phase == "history" && page.hasMore { #expect(page.remaining == pushed.recent + derived + pushed.old - sent) }
            }
            let last = try #require(pages.last)
            #expect(!last.hasMore && last.remaining == 0 && last.later == 0)
            let digests = try #require(last.json["digests"] as? JSON)
            #expect((digests["dailyProgress"] as? JSON)?["count"] as? Int == (Self.recentUpTo + 1) + 80)

            // The pulls after it are plain changes.
            let next = try await Self.page(device, cursor: cursor, limit: 20)
            #expect(next.changes.isEmpty && next.phase == "changes" && !next.hasMore)
            _ = try await device.push([Wire.change("habits", UUID(), at: Wire.at(5), record: Wire.habit(name: "Walk"))])
            let after = try await Self.page(device, cursor: cursor, limit: 20)
            #expect(after.phase == "changes" && after.changes.map { $0["collection"] as? String } == ["habits"])
        }
    }

    /// The user's live records as the database holds them: `collection/id` → serverVersion.
    static func stored(_ world: SyncWorld, user: String) async throws -> [String: Int] {
        let tables = ["habits": "habits", "dailyProgress": "daily_progress", "usageEvents": "usage_events", "xpTransactions": "xp_transactions"]
        let union = tables.map { collection, table in
            "SELECT '\(collection)/' || id::text AS key, server_version FROM \(table) WHERE user_id = '\(user)' AND deleted_at IS NULL"
        }.joined(separator: " UNION ALL ")
        return try await world.database.withPool(size: 1) { pool in
            try await pool.withConnection { connection in
                var stored: [String: Int] = [:]
                for row in try await connection.query(PGQuery(unsafeSQL: union)).rows {
                    stored[try row.decode("key", as: String.self)] = Int(try row.decode("server_version", as: Int64.self))
                }
                return stored
            }
        }
    }

    /// Another device writes between every page and all along: new recent and old days,
    /// edits of old and recent days, deletes of both. The phased first sync and the pulls
    /// after it end holding exactly what the database holds, and no version comes twice.
    @Test(arguments: [3, 7, 50])
    func writesDuringAPhasedFirstSyncAreNeitherMissedNorRepeated(limit: Int) async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let reader = try await world.client(server, user: "busy", device: "new-phone")
            let writer = try await world.client(server, user: "busy", device: "old-phone")
            let today = LocalDate(Date(), in: .gmt)
            _ = try await Self.fill(writer, today: today, oldDays: 30)
            let habit = UUID()
            _ = try await writer.push([Wire.change("habits", habit, at: Wire.at(0), record: Wire.habit(name: "Second"))])
            // The writer's own records, which it edits and deletes later.
            let written = LockedIDs()
            func write(_ round: Int) async throws {
                let recentDay = today.adding(days: -(round % (Self.recentUpTo + 1)))
                let oldDay = today.adding(days: -(Self.oldFrom + 30 + round))
                var changes = [
                    Wire.change("dailyProgress", UUID(), at: Wire.at(Double(round)), record: Wire.progress(habit: habit, date: recentDay.description)),
                    Wire.change("dailyProgress", UUID(), at: Wire.at(Double(round)), record: Wire.progress(habit: habit, date: oldDay.description)),
                ]
                // Edit one earlier record, delete another.
                let earlier = written.all()
                if earlier.count >= 2 {
                    let edited = earlier[round % earlier.count], deleted = earlier[(round * 7 + 1) % earlier.count]
                    if edited.id != deleted.id {
                        changes.append(
                            Wire.change("dailyProgress", edited.id, at: Wire.at(Double(round) + 0.5), record: Wire.progress(habit: habit, date: edited.day, count: round % 9 + 1)))
                        changes.append(Wire.change("dailyProgress", deleted.id, at: Wire.at(Double(round) + 0.5), record: nil))
                    }
                }
                let reply = try await writer.push(changes)
                #expect(reply.status == 200)
                for (index, change) in changes.prefix(2).enumerated() where reply.status(index) == "applied" {
                    if let id = UUID(uuidString: change["id"] as? String ?? ""), let day = (change["record"] as? JSON)?["date"] as? String { written.add(id, day) }
                }
            }
            let background = Task {
                for round in 1000..<1030 { try await write(round) }
            }
            var held: [String: Int] = [:]
            var seen = Set<String>()
            var cursor: String?
            var round = 0
            var firstSyncDone = false
            while true {
                let page = try await Self.page(reader, cursor: cursor, limit: limit)
                var previous = 0
                for change in page.changes {
                    let version = change["serverVersion"] as? Int ?? -1
                    #expect(version > previous, "a page's versions ascend")
                    previous = version
                    #expect(seen.insert("\(Self.key(change))@\(version)").inserted, "\(Self.key(change)) at \(version) came twice")
                    #expect(held[Self.key(change)].map { $0 < version } ?? true, "\(Self.key(change)) came at a lower version after a higher one")
                    if change["op"] as? String == "delete" { held[Self.key(change)] = nil } else { held[Self.key(change)] = version }
                }
                cursor = page.json["cursor"] as? String
                if !page.hasMore { firstSyncDone = true }
                if firstSyncDone && !page.hasMore && background.isCancelled == false {
                    try await background.value
                    // One more pull to the end after the last write.
                    let rest = try await reader.pullAll(from: cursor, limit: limit)
                    for change in rest.changes {
                        if change["op"] as? String == "delete" { held[Self.key(change)] = nil } else { held[Self.key(change)] = change["serverVersion"] as? Int }
                    }
                    break
                }
                round += 1
                if round < 60 { try await write(round) }
            }
            let stored = try await Self.stored(world, user: "busy")
            let compared = held.filter { key, _ in ["habits", "dailyProgress", "usageEvents", "xpTransactions"].contains(key.split(separator: "/").first.map(String.init) ?? "") }
            #expect(compared == stored, "held \(compared.count), stored \(stored.count); missing \(Set(stored.keys).subtracting(compared.keys).prefix(3))")
        }
    }

    /// A watch keeping ten days: no dated record older than its window reaches it, in the
    /// first sync or after; its digests count the window, and match what it holds; the window
    /// may move forward with a cursor but not back; a bad day is a 400 naming the field.
    @Test func aWindowedDeviceNeverReceivesOlderRecords() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let phone = try await world.client(server, user: "wearer", device: "phone")
            let watch = try await world.client(server, user: "wearer", device: "watch")
            let today = LocalDate(Date(), in: .gmt)
            _ = try await Self.fill(phone, today: today, oldDays: 20)
            let window = today.adding(days: -9)
            var received: [JSON] = []
            var cursor: String?
            var last: Page?
            repeat {
                let page = try await Self.page(watch, cursor: cursor, limit: 9, extra: "historyFrom=\(window)")
                received += page.changes
                cursor = page.json["cursor"] as? String
                last = page
            } while last?.hasMore == true
            let ages = received.compactMap { Self.daysAgo($0, today: today) }
            #expect(!ages.isEmpty && ages.allSatisfy { $0 <= 10 }, "older than the window: \(ages.filter { $0 > 10 })")
            let progress = received.filter { $0["collection"] as? String == "dailyProgress" }
            #expect(progress.count == 10)
            let final = try #require(last)
            #expect(final.json["historyFrom"] as? String == window.description)
            let digests = try #require(final.json["digests"] as? JSON)
            var expected = RecordDigest()
            for change in progress {
                expected.add(id: try #require(UUID(uuidString: change["id"] as? String ?? "")), serverVersion: Int64(change["serverVersion"] as? Int ?? 0))
            }
            #expect((digests["dailyProgress"] as? JSON)?["count"] as? Int == 10)
            #expect((digests["dailyProgress"] as? JSON)?["hash"] as? String == expected.hashText)
            #expect((digests["habits"] as? JSON)?["count"] as? Int == 1, "collections that are not history are whole")

            // The phone writes an old day and a recent one: only the recent one comes.
            let habit = try #require(received.first { $0["collection"] as? String == "habits" }?["id"] as? String)
            _ = try await phone.push([
                Wire.change("dailyProgress", UUID(), at: Wire.at(9), record: Wire.progress(habit: try #require(UUID(uuidString: habit)), date: today.adding(days: -60).description)),
                Wire.change("dailyProgress", UUID(), at: Wire.at(9), record: Wire.progress(habit: try #require(UUID(uuidString: habit)), date: today.adding(days: -1).description, count: 4)),
            ])
            let later = try await Self.page(watch, cursor: cursor, limit: 50, extra: "historyFrom=\(today.adding(days: -8))")
            #expect(later.changes.compactMap { Self.daysAgo($0, today: today) } == [1], "\(later.changes)")
            #expect(later.phase == "changes")
            let movedOn = try #require(later.json["cursor"] as? String)

            // Back to an earlier day, or no window, with that cursor: 400 naming historyFrom.
            for extra in ["historyFrom=\(today.adding(days: -30))", ""] {
                let widened = try await watch.pull(cursor: movedOn, limit: 5, extra: extra)
                #expect(widened.status == 400 && (widened.json["error"] as? JSON)?["field"] as? String == "historyFrom", "\(widened.json)")
            }
            for bad in ["2026-02-30", "1969-12-31", "10000-01-01", "today", "2026-1-1", "%00"] {
                let refused = try await watch.pull(limit: 5, extra: "historyFrom=\(bad)")
                #expect(refused.status == 400 && (refused.json["error"] as? JSON)?["field"] as? String == "historyFrom", "\(bad): \(refused.json)")
            }
        }
    }

    /// The SDK: `onProgress` tells each phase as it is reached, the store keeps the phase, and
    /// a device keeping ten days drops what leaves the window without a digest mismatch and
    /// without deleting anything on the server.
    @Test func theSDKTellsProgressAndKeepsItsWindow() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let phone = try await world.client(server, user: "sdk", device: "phone")
            let today = LocalDate(Date(), in: .gmt)
            let pushed = try await Self.fill(phone, today: today, oldDays: 60)
            let token = try await world.token(user: "sdk")
            let base = try #require(URL(string: server.baseURL + "/"))

            let store = try LocalStore(path: nil, deviceID: "new-phone")
            #expect(try store.syncPhase() == nil)
            var engine = SyncEngine(store: store, baseURL: base, transport: URLSessionTransport.patient()) { token }
            engine.pageSize = 25
            engine.log = { _ in }
            let told = Told()
            engine.onProgress = { told.add($0) }
            let report = try await engine.sync()
            let progress = told.all()
            #expect(progress.first?.phase == .recent)
            #expect(progress.last?.phase == .complete)
            #expect(progress.map(\.phase) == progress.map(\.phase).sorted())
            let mainScreen = try #require(progress.firstIndex { $0.phase != .recent })
            #expect(progress[mainScreen].pulled >= pushed.recent, "the main screen's records were all held at \(progress[mainScreen].pulled)")
            #expect(try store.syncPhase() == .complete)
            #expect(report.timelineEvents.isEmpty)
            #expect(try store.fetchAll(DailyProgress.self).count == (Self.recentUpTo + 1) + 60)

            // The watch keeps ten days.
            let watchStore = try LocalStore(path: nil, deviceID: "watch")
            var watch = SyncEngine(store: watchStore, baseURL: base, transport: URLSessionTransport.patient()) { token }
            watch.log = { _ in }
            watch.historyDays = 30
            watch.calendarZone = .gmt
            #expect(try await watch.sync().timelineEvents.isEmpty)
            #expect(try watchStore.fetchAll(DailyProgress.self).count == 30)
            // Narrowed to ten days: twenty leave the device, none leaves the server, and the
            // digests of the window match (no repair).
            watch.historyDays = 10
            let narrowed = try await watch.sync()
            #expect(narrowed.timelineEvents.isEmpty, "\(narrowed.timelineEvents)")
            #expect(try watchStore.fetchAll(DailyProgress.self).count == 10)
            #expect(try watchStore.historyFrom() == today.adding(days: -9))
            #expect(try await world.count("daily_progress", where: "user_id = 'sdk' AND deleted_at IS NULL") == (Self.recentUpTo + 1) + 60)
            // Widened again: pulled over, the older days come back.
            watch.historyDays = 20
            _ = try await watch.sync()
            #expect(try watchStore.fetchAll(DailyProgress.self).count == 20)
        }
    }
}

/// Ids and days the writer stored, shared with its background task.
final class LockedIDs: Sendable {
    private let value = Mutex<[(id: UUID, day: String)]>([])
    func add(_ id: UUID, _ day: String) { value.withLock { $0.append((id, day)) } }
    func all() -> [(id: UUID, day: String)] { value.withLock { $0 } }
}

/// What `onProgress` was told, in order.
final class Told: Sendable {
    private let value = Mutex<[PullProgress]>([])
    func add(_ progress: PullProgress) { value.withLock { $0.append(progress) } }
    func all() -> [PullProgress] { value.withLock { $0 } }
}
