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

@Suite struct PullTests {
    @Test func pagesFollowServerVersionsWithHasMoreAndACollectionFilter() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let device = try await world.client(server, user: "alice")
            let habit = UUID()
            var changes = [Wire.change("habits", habit, at: Wire.at(0), record: Wire.habit())]
            // Eleven days, 19 to 9 days before `Wire.base`: all within a first sync's recent window.
            changes += (1...11).map { day in
                Wire.change("dailyProgress", UUID(), at: Wire.at(1), record: Wire.progress(habit: habit, date: Wire.day(day - 20)))
            }
            changes += (1...3).map { _ in Wire.change("usageEvents", UUID(), at: Wire.at(2), record: Wire.usageEvent()) }
            #expect(try await device.push(changes).results.allSatisfy { $0["status"] as? String == "applied" })

            var cursor: String? = nil
            var versions: [Int] = []
            var pages = 0
            repeat {
                let page = try await device.pull(cursor: cursor, limit: 4)
                #expect(page.status == 200)
                #expect(page.changes.count <= 4)
                versions += page.changes.compactMap { $0["serverVersion"] as? Int }
                pages += 1
                cursor = page.cursor
                if !page.hasMore { break }
            } while pages < 10
            // 15 pushed records, plus the derived records the server computed from them.
            #expect(versions.count >= 15)
            #expect(versions == versions.indices.map { $0 + 1 })  // 1, 2, …; no range to trap on when empty
            #expect(pages == (versions.count + 3) / 4)
            // Nothing new: the same cursor back, no changes.
            let empty = try await device.pull(cursor: cursor)
            #expect(empty.changes.isEmpty)
            #expect(empty.cursor == cursor)
            #expect(empty.json["serverTime"] as? String != nil)

            let onlyHabits = try await device.pull(collections: "habits,usageEvents")
            let collections = Set(onlyHabits.changes.compactMap { $0["collection"] as? String })
            #expect(collections == ["habits", "usageEvents"])
            #expect(onlyHabits.changes.count == 4)
        }
    }

    @Test func aCursorBehindThePurgeHorizonIs410AndAFreshStartWorks() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let device = try await world.client(server, user: "alice")
            let habit = UUID()
            _ = try await device.push([Wire.change("habits", habit, at: Wire.at(0), record: Wire.habit())])
            let oldCursor = try await device.pullAll().cursor
            _ = try await device.push([Wire.change("habits", habit, at: Wire.at(10), record: nil)])
            #expect(try await device.pull(cursor: oldCursor).changes.count == 1)

            // Retention of one millisecond: the tombstone is purged at once.
            let report = try await world.database.withPool(size: 1) { pool in
                try await MaintenanceStore(pool: pool).run(retention: .init(tombstones: 0.001, pushBatches: 0.001, conflicts: 0.001, usageEvents: 90 * 86_400), now: Date().addingTimeInterval(1))
            }
            #expect(report.tombstonesPurged == 1)
            #expect(report.pushBatchesPurged == 2)
            #expect(try await world.count("habits") == 0)

            let expired = try await device.pull(cursor: oldCursor)
            #expect(expired.status == 410)
            #expect(expired.errorCode == "cursor_expired")
            let fresh = try await device.pull()
            #expect(fresh.status == 200)
            #expect(try await device.pull(cursor: fresh.cursor).status == 200)
        }
    }

    @Test func maintenanceArchivesOldUsageEventMonthsAndKeepsFutureOnesReady() async throws {
        let world = try await SyncWorld.make()
        let now = Date()
        let report = try await world.database.withPool(size: 1) { pool in
            try await MaintenanceStore(pool: pool).run(retention: .init(), now: now)
        }
        #expect(report.partitionsArchived.contains("usage_events_2024_01"))
        // The month holding the retention's cutoff still has events to keep, and every later one.
        let cutoffMonth = LocalDate(now.addingTimeInterval(-MaintenanceStore.Retention().usageEvents), in: .gmt)
        let firstKept = String(format: "usage_events_%04d_%02d", cutoffMonth.year, cutoffMonth.month)
        #expect(!report.partitionsArchived.isEmpty && !report.partitionsArchived.contains { $0 >= firstKept }, "\(report.partitionsArchived)")
        let archived = try await world.count("pg_tables", where: "schemaname = 'archive' AND tablename = 'usage_events_2024_01'")
        #expect(archived == 1)
    }

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
                try await MaintenanceStore(pool: pool).run(
                    retention: .init(tombstones: 0.001, pushBatches: 90 * 86_400, conflicts: 90 * 86_400, usageEvents: 90 * 86_400),
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
}
