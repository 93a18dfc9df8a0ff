import Foundation
import FoundationNetworking
import HabitSyncAuth
import HabitSyncDomain
import HabitSyncServer
import HabitSyncStore
import LibPQClient
import Logging
import ServerHarness
import SyncTestSupport
import Synchronization
import TestSupport
import Testing

/// The server as the single source of truth for streaks, XP and levels, through HTTP.
@Suite struct DerivedStateSyncTests {
    static var today: LocalDate { LocalDate(Date(), in: TimeZone(identifier: "UTC")!) }

    static func derived(_ state: [String: JSON], _ collection: String) -> JSON? {
        state.values.first { $0["collection"] as? String == collection }?["record"] as? JSON
    }

    @Test func aWeekOfHistoryPullsBackTheRightStreakXPAndLevel() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let device = try await world.client(server, user: "alice")
            let habit = UUID()
            let start = Self.today.adding(days: -6)
            var changes = [
                Wire.change("userSettings", UUID(), at: Wire.at(0), record: ["timezone": "UTC"]),
                Wire.change("habits", habit, at: Wire.at(0), record: Wire.habit().merging(["startDate": start.description, "goalCount": 1]) { _, n in n }),
            ]
            for offset in 0..<7 {
                changes.append(
                    Wire.change("dailyProgress", UUID(), at: Wire.at(1), record: ["habitId": habit.uuidString, "date": start.adding(days: offset).description, "progressCount": 1, "goalCount": 1]))
            }
            #expect(try await device.push(changes).results.allSatisfy { $0["status"] as? String == "applied" })
            let state = try await device.state()
            let streak = Self.derived(state, "globalStreak")
            #expect(streak?["currentStreak"] as? Int == 7)
            #expect(streak?["longestStreak"] as? Int == 7)
            #expect(streak?["totalCompleteDays"] as? Int == 7)
            #expect(streak?["lastCompleteDate"] as? String == Self.today.description)
            #expect(streak?["computedFor"] as? String == Self.today.description)
            let progress = Self.derived(state, "userProgress")
            #expect(progress?["totalXP"] as? Int == 350)
            #expect(progress?["currentLevel"] as? Int == 2)
            #expect(progress?["xpForCurrentLevel"] as? Int == 50)
            #expect(progress?["xpForNextLevel"] as? Int == 900)
            let awards = state.values.filter { $0["collection"] as? String == "xpTransactions" && $0["updatedBy"] as? String == "server" }
            #expect(awards.count == 7)

            // Derived collections are read-only to devices.
            #expect(try await device.push([Wire.change("userProgress", UUID(), at: Wire.at(9), record: ["totalXP": 99999])]).errorCode(0) == "derived_collection")
        }
    }

    @Test(arguments: [false, true])
    func twoDevicesCompletingTheSameDayAwardItOnceAndAnUndoTakesItBack(_ watchFirst: Bool) async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let phone = try await world.client(server, user: "alice", device: "phone")
            let watch = phone.withDevice("watch")
            let habit = UUID()
            let today = Self.today.description
            _ = try await phone.push([Wire.change("habits", habit, at: Wire.at(0), record: Wire.habit().merging(["startDate": today, "goalCount": 1]) { _, n in n })])
            let fromPhone = Wire.change("dailyProgress", UUID(), at: Wire.at(10), record: ["habitId": habit.uuidString, "date": today, "progressCount": 1, "goalCount": 1])
            let fromWatch = Wire.change("dailyProgress", UUID(), at: Wire.at(11), record: ["habitId": habit.uuidString, "date": today, "progressCount": 1, "goalCount": 1])
            for (device, change) in watchFirst ? [(watch, fromWatch), (phone, fromPhone)] : [(phone, fromPhone), (watch, fromWatch)] {
                #expect(try await device.push([change]).status == 200)
            }
            func awards() async throws -> (net: Int, rows: Int) {
                try await world.database.withPool(size: 1) { pool in
                    try await pool.withConnection { connection in
                        let row = try await connection.query(
                            """
                            SELECT coalesce(sum(amount), 0)::int8 AS net, count(*) AS rows FROM xp_transactions
                            WHERE updated_by = 'server' AND date = \(today)::date
                            """
                        ).single()
                        return (try row.decode("net", as: Int.self), try row.decode("rows", as: Int.self))
                    }
                }
            }
            #expect(try await awards() == (50, 1))
            // Undo on the phone: newer progress below the goal.
            _ = try await phone.push([Wire.change("dailyProgress", UUID(), at: Wire.at(20), record: ["habitId": habit.uuidString, "date": today, "progressCount": 0, "goalCount": 1])])
            #expect(try await awards() == (0, 2))
            let progress = Self.derived(try await phone.state(), "userProgress")
            #expect(progress?["totalXP"] as? Int == 0)
            // Completed again: awarded again.
            _ = try await watch.push([Wire.change("dailyProgress", UUID(), at: Wire.at(30), record: ["habitId": habit.uuidString, "date": today, "progressCount": 2, "goalCount": 1])])
            #expect(try await awards() == (50, 3))
        }
    }

    @Test func theUsageStreakCountsRecentExitDaysAndRemembersAnOldOne() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            func exit(daysAgo: Int) -> JSON {
                Wire.change(
                    "usageEvents", UUID(), at: Wire.at(0),
                    record: [
                        "eventType": "exit_to_focus", "timerDuration": 30, "pauseDuration": 10,
                        "timestamp": WireTime.format(Date().addingTimeInterval(-Double(daysAgo) * 86_400)),
                    ])
            }
            let active = try await world.client(server, user: "active")
            _ = try await active.push([Wire.change("userSettings", UUID(), at: Wire.at(0), record: ["timezone": "UTC"]), exit(daysAgo: 0), exit(daysAgo: 1), exit(daysAgo: 2), exit(daysAgo: 10)])
            let streak = Self.derived(try await active.state(), "usageStreak")
            #expect(streak?["currentDayCount"] as? Int == 3)
            #expect(streak?["startDate"] as? String == Self.today.adding(days: -2).description)
            #expect(streak?["lastActivityDate"] as? String == Self.today.description)

            // Exits only long ago: no current run, but the last activity is still known.
            let lapsed = try await world.client(server, user: "lapsed")
            _ = try await lapsed.push([Wire.change("userSettings", UUID(), at: Wire.at(0), record: ["timezone": "UTC"]), exit(daysAgo: 100)])
            let old = Self.derived(try await lapsed.state(), "usageStreak")
            #expect(old?["currentDayCount"] as? Int == 0)
            #expect(old?["lastActivityDate"] as? String == Self.today.adding(days: -100).description)

            // A run longer than the first window (62 days) is found by widening it.
            let devoted = try await world.client(server, user: "devoted")
            _ = try await devoted.push([Wire.change("userSettings", UUID(), at: Wire.at(0), record: ["timezone": "UTC"])] + (0..<80).map { exit(daysAgo: $0) })
            #expect(Self.derived(try await devoted.state(), "usageStreak")?["currentDayCount"] as? Int == 80)
        }
    }

    @Test func aTenantWithDailyXPOffAwardsNothing() async throws {
        let world = try await SyncWorld.make()
        _ = try await world.database.withPool(size: 1) { pool in
            try await pool.withConnection { try await $0.query("UPDATE tenants SET daily_completion_xp = 0") }
        }
        try await world.serve { server in
            let device = try await world.client(server, user: "alice")
            let habit = UUID()
            let today = Self.today.description
            _ = try await device.push([
                Wire.change("habits", habit, at: Wire.at(0), record: Wire.habit().merging(["startDate": today, "goalCount": 1]) { _, n in n }),
                Wire.change("dailyProgress", UUID(), at: Wire.at(1), record: ["habitId": habit.uuidString, "date": today, "progressCount": 1, "goalCount": 1]),
            ])
            #expect(try await world.count("xp_transactions") == 0)
            #expect(Self.derived(try await device.state(), "globalStreak")?["currentStreak"] as? Int == 1)
        }
    }

    @Test func aPullOnALaterDayRecomputesAStaleStreak() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let device = try await world.client(server, user: "alice")
            let habit = UUID()
            let today = Self.today
            _ = try await device.push([
                Wire.change("habits", habit, at: Wire.at(0), record: Wire.habit().merging(["startDate": today.adding(days: -1).description, "goalCount": 1]) { _, n in n }),
                Wire.change("dailyProgress", UUID(), at: Wire.at(1), record: ["habitId": habit.uuidString, "date": today.adding(days: -1).description, "progressCount": 1, "goalCount": 1]),
                Wire.change("dailyProgress", UUID(), at: Wire.at(1), record: ["habitId": habit.uuidString, "date": today.description, "progressCount": 1, "goalCount": 1]),
            ])
            #expect(Self.derived(try await device.state(), "globalStreak")?["currentStreak"] as? Int == 2)
        }
        // Two days later nothing was pushed: the pull itself finds the streak stale and breaks it.
        let identity = VerifiedIdentity.trusted(tenantID: world.tenant, userID: "alice")
        let page = try await world.database.withPool(size: 2, role: "habitsync_app") { pool in
            try await PullStore(pool: pool, statementTimeout: ServerConfiguration.forTests.statementTimeout).pull(
                identity: identity, after: nil, limit: 500, collections: SyncCollection.allCases, now: Date().addingTimeInterval(2 * 86_400))
        }
        var streak: JSON?
        for text in page.changes {
            guard let change = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? JSON else { continue }
            if change["collection"] as? String == "globalStreak" { streak = change["record"] as? JSON }
        }
        #expect(streak?["currentStreak"] as? Int == 0)
        #expect(streak?["longestStreak"] as? Int == 2)
        #expect(streak?["computedFor"] as? String == Self.today.adding(days: 2).description)
    }

    @Test func deletingUserSettingsPutsTheUsersDaysBackOnUTC() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let device = try await world.client(server, user: "alice")
            let settings = UUID()
            _ = try await device.push([Wire.change("userSettings", settings, at: Wire.at(0), record: ["timezone": "Pacific/Kiritimati"])])
            #expect(try await world.count("users", where: "user_id = 'alice' AND time_zone = 'Pacific/Kiritimati'") == 1)
            let reply = try await device.push([Wire.change("userSettings", settings, at: Wire.at(10), record: nil)])
            #expect(reply.status(0) == "applied")
            #expect(try await world.count("users", where: "user_id = 'alice' AND time_zone = 'UTC'") == 1)
        }
    }

    @Test func archivedMonthsKeepCountingAndTheirEventsAreNotAppliedAgain() async throws {
        let world = try await SyncWorld.make()
        let now = Date()
        let today = LocalDate(now, in: .gmt)
        try await world.serve { server in
            let device = try await world.client(server, user: "alice")
            // An exit on each of the last 70 days (UTC), the user's zone.
            var events: [JSON] = []
            var ids: [UUID] = []
            for back in 0..<70 {
                let id = UUID()
                ids.append(id)
                var event = Wire.usageEvent()
                event["timestamp"] = WireTime.format(now.addingTimeInterval(-Double(back) * 86_400))
                events.append(Wire.change("usageEvents", id, at: Wire.at(0), record: event))
            }
            _ = try await device.push(events)
            let before = try await Self.usageStreak(device)
            #expect(before == 70)

            // Archive every month that ended more than 10 days ago.
            let report = try await world.database.withPool(size: 1) { pool in
                try await MaintenanceStore(pool: pool).run(retention: .init(tombstones: 90 * 86_400, pushBatches: 90 * 86_400, conflicts: 90 * 86_400, usageEvents: 10 * 86_400))
            }
            #expect(!report.partitionsArchived.isEmpty)

            // The oldest event again: stored long ago and archived since, so unchanged, with no
            // version that was never written.
            let retry = try await device.push([events[69]])
            #expect(retry.status(0) == "unchanged", "\(retry.result(0))")
            #expect(retry.result(0)["serverVersion"] == nil)
            // A push recomputes the streak: the archived exits still count.
            _ = try await device.push([Wire.change("habits", UUID(), at: Wire.at(0), record: Wire.habit())])
            #expect(try await Self.usageStreak(device) == 70, "today \(today)")
        }
    }

    static func usageStreak(_ device: SyncClient) async throws -> Int? {
        let records = try await device.pullAll().changes.filter { $0["collection"] as? String == "usageStreak" }
        return (records.last?["record"] as? JSON)?["currentDayCount"] as? Int
    }
}
