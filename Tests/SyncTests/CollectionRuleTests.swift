import Foundation
import HabitSyncDomain
import SyncTestSupport
import TestSupport
import Testing

/// The per-collection rules of domain.md beyond plain last-writer-wins.
@Suite struct CollectionRuleTests {
    @Test func deletingAHabitTombstonesItsRemindersAndProgressAsTheServer() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let device = try await world.client(server, user: "alice")
            let habit = UUID(), reminder = UUID(), progress = UUID(), otherHabit = UUID(), survivor = UUID()
            let setup = try await device.push([
                Wire.change("habits", habit, at: Wire.at(0), record: Wire.habit()),
                Wire.change("reminders", reminder, at: Wire.at(1), record: Wire.reminder(habit: habit)),
                Wire.change("dailyProgress", progress, at: Wire.at(1), record: Wire.progress(habit: habit)),
                Wire.change("habits", otherHabit, at: Wire.at(0), record: Wire.habit(name: "Run")),
                Wire.change("reminders", survivor, at: Wire.at(1), record: Wire.reminder(habit: otherHabit)),
            ])
            #expect(setup.results.allSatisfy { $0["status"] as? String == "applied" })
            let cursor = try await device.pullAll().cursor
            #expect(try await device.push([Wire.change("habits", habit, at: Wire.at(100), record: nil)]).status(0) == "applied")
            let delta = try await device.pull(cursor: cursor).changes
            var cascaded: [JSON] = []
            for change in delta where (change["collection"] as? String) ?? "" != "habits" { cascaded.append(change) }
            let cascadedIDs = Set(cascaded.compactMap { $0["id"] as? String })
            #expect(cascadedIDs == [reminder.uuidString.lowercased(), progress.uuidString.lowercased()])
            for change in cascaded {
                #expect(change["op"] as? String == "delete")
                #expect(change["updatedBy"] as? String == "server")
                #expect(change["updatedAt"] as? String == Wire.at(100))
            }
            // Versions stay unique and increasing across the cascade.
            let versions = delta.compactMap { $0["serverVersion"] as? Int }
            #expect(versions == versions.sorted() && Set(versions).count == versions.count)
            // New progress for the deleted habit is refused as an unknown reference.
            let tomorrow = Wire.progress(habit: habit, date: Wire.day(1))
            let late = try await device.push([Wire.change("dailyProgress", UUID(), at: Wire.at(200), record: tomorrow)])
            #expect(late.errorCode(0) == "unknown_reference")
            #expect((late.result(0)["error"] as? JSON)?["field"] as? String == "habitId")
        }
    }

    @Test func twoDevicesProgressForTheSameDayMergesIntoOneRecord() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let phone = try await world.client(server, user: "alice", device: "phone")
            let watch = phone.withDevice("watch")
            let habit = UUID(), fromPhone = UUID(), fromWatch = UUID()
            _ = try await phone.push([Wire.change("habits", habit, at: Wire.at(0), record: Wire.habit())])
            #expect(try await phone.push([Wire.change("dailyProgress", fromPhone, at: Wire.at(10), record: Wire.progress(habit: habit, count: 2))]).status(0) == "applied")
            let merged = try await watch.push([Wire.change("dailyProgress", fromWatch, at: Wire.at(20), record: Wire.progress(habit: habit, count: 5))])
            #expect(merged.status(0) == "applied")
            #expect(merged.result(0)["canonicalId"] as? String == fromPhone.uuidString.lowercased())
            #expect(try await world.count("daily_progress", where: "deleted_at IS NULL") == 1)
            let state = try await phone.state().values.filter { $0["collection"] as? String == "dailyProgress" }
            #expect(state.count == 1)
            #expect(state.first?["id"] as? String == fromPhone.uuidString.lowercased())
            #expect((state.first?["record"] as? JSON)?["progressCount"] as? Int == 5)
            // An older one from a third id is superseded by the merged record.
            let stale = try await phone.push([Wire.change("dailyProgress", UUID(), at: Wire.at(15), record: Wire.progress(habit: habit, count: 1))])
            #expect(stale.status(0) == "superseded")
            #expect(stale.result(0)["canonicalId"] as? String == fromPhone.uuidString.lowercased())
        }
    }

    @Test func focusSessionsMoveFreelyUntilFinalAndOnlyOneRuns() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let device = try await world.client(server, user: "alice")
            let first = UUID(), second = UUID()
            #expect(try await device.push([Wire.change("focusSessions", first, at: Wire.at(0), record: Wire.focus(state: "paused", start: 0, duration: 300))]).status(0) == "applied")
            // paused → completed (the device syncs the latest state, not every step).
            #expect(try await device.push([Wire.change("focusSessions", first, at: Wire.at(10), record: Wire.focus(state: "completed", start: 0))]).status(0) == "applied")
            // completed → active: a winning change, refused.
            let reopen = try await device.push([Wire.change("focusSessions", first, at: Wire.at(20), record: Wire.focus(state: "active", start: 0, duration: 10))])
            #expect(reopen.status(0) == "rejected")
            #expect(reopen.errorCode(0) == "invalid_transition")
            // … but a losing one is simply superseded.
            let stale = try await device.push([Wire.change("focusSessions", first, at: Wire.at(5), record: Wire.focus(state: "active", start: 0, duration: 10))])
            #expect(stale.status(0) == "superseded")

            // Two running sessions: the one that started earlier is abandoned by the server.
            let a = UUID()
            #expect(try await device.push([Wire.change("focusSessions", a, at: Wire.at(100), record: Wire.focus(state: "active", start: 100, duration: 0))]).status(0) == "applied")
            let cursor = try await device.pullAll().cursor
            #expect(try await device.push([Wire.change("focusSessions", second, at: Wire.at(200), record: Wire.focus(state: "active", start: 200, duration: 0))]).status(0) == "applied")
            let delta = try await device.pull(cursor: cursor).changes
            let abandoned = delta.first { $0["id"] as? String == a.uuidString.lowercased() }
            #expect(abandoned?["updatedBy"] as? String == "server")
            #expect((abandoned?["record"] as? JSON)?["state"] as? String == "abandoned")
            #expect((abandoned?["record"] as? JSON)?["endTime"] as? String == Wire.at(200))
            #expect(try await world.count("focus_sessions", where: "state IN ('active', 'paused')") == 1)
        }
    }

    @Test func ledgerAndEventsAreAppendOnly() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let device = try await world.client(server, user: "alice")
            for (collection, record, changed) in [("xpTransactions", Wire.xp(), Wire.xp(amount: 60)), ("usageEvents", Wire.usageEvent(), Wire.usageEvent(pause: 20))] {
                let id = UUID()
                #expect(try await device.push([Wire.change(collection, id, at: Wire.at(0), record: record)]).status(0) == "applied")
                #expect(try await device.push([Wire.change(collection, id, at: Wire.at(5), record: record)]).status(0) == "unchanged")
                let altered = try await device.push([Wire.change(collection, id, at: Wire.at(9), record: changed)])
                #expect(altered.errorCode(0) == "immutable_record", "\(collection)")
                let deleted = try await device.push([Wire.change(collection, id, at: Wire.at(9), record: nil)])
                #expect(deleted.errorCode(0) == "immutable_record", "\(collection)")
            }
            // A usage event id sent again with another timestamp (another monthly partition) is
            // still the same record: the id registry finds it.
            let event = UUID()
            #expect(try await device.push([Wire.change("usageEvents", event, at: Wire.at(0), record: Wire.usageEvent())]).status(0) == "applied")
            var moved = Wire.usageEvent()
            moved["timestamp"] = "2025-01-15T10:00:00.000Z"
            #expect(try await device.push([Wire.change("usageEvents", event, at: Wire.at(1), record: moved)]).errorCode(0) == "immutable_record")
            #expect(try await world.count("xp_transactions") == 1)
            #expect(try await world.count("usage_events") == 2)
            #expect(try await world.count("usage_event_ids") == 2)
        }
    }

    @Test func theEarliestUnlockOfAnAchievementWins() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let phone = try await world.client(server, user: "alice", device: "phone")
            let watch = phone.withDevice("watch")
            let fromPhone = UUID(), fromWatch = UUID()
            #expect(try await phone.push([Wire.change("achievements", fromPhone, at: Wire.at(100), record: Wire.achievement(unlockedAt: 100))]).status(0) == "applied")
            let earlier = try await watch.push([Wire.change("achievements", fromWatch, at: Wire.at(200), record: Wire.achievement(unlockedAt: 50))])
            #expect(earlier.status(0) == "applied")
            // A later unlock (the same title, written later) does not move the unlock; the
            // unlock it carried is logged by field as lost to the earlier one.
            let later = try await watch.push([Wire.change("achievements", UUID(), at: Wire.at(300), record: Wire.achievement(unlockedAt: 500))])
            #expect(later.status(0) == "applied")
            #expect(later.result(0)["canonicalId"] as? String == fromPhone.uuidString.lowercased())
            #expect(try await world.count("conflict_log", where: "collection = 'achievements' AND field = 'unlockedAt'") == 1)
            let state = try await phone.state().values.filter { $0["collection"] as? String == "achievements" }
            #expect(state.count == 1)
            #expect((state.first?["record"] as? JSON)?["unlockedAt"] as? String == Wire.at(50))
            #expect(state.first?["id"] as? String == fromPhone.uuidString.lowercased(), "the first id stays the record's id")
        }
    }

    @Test func derivedAndUnknownCollectionsAreRejectedAndTheRestApplies() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let device = try await world.client(server, user: "alice")
            let reply = try await device.push([
                Wire.change("globalStreak", UUID(), at: Wire.at(0), record: ["currentStreak": 99]),
                Wire.change("userProgress", UUID(), at: Wire.at(0), record: ["totalXP": 1_000_000]),
                Wire.change("streaks", UUID(), at: Wire.at(0), record: [:]),
                Wire.change("habits", UUID(), at: Wire.at(0), record: Wire.habit()),
            ])
            #expect(reply.status == 200)
            #expect(reply.errorCode(0) == "derived_collection")
            #expect(reply.errorCode(1) == "derived_collection")
            #expect(reply.errorCode(2) == "unknown_collection")
            #expect(reply.status(3) == "applied")
            #expect(try await world.count("conflict_log", where: "outcome = 'rejected'") == 3)
        }
    }
}
