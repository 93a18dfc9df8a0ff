import Foundation
import HabitSyncDomain
import Testing

/// A user with something in every table, for the export, erasure and Citus placement tests.
public enum AccountFixture {
    /// Every collection for one user, through the API: several of each, a tombstone, a
    /// superseded and a rejected change (conflict log), exits on each of the last `eventDays` days.
    public static func fill(_ device: SyncClient, eventDays: Int, now: Date) async throws {
        let habit = UUID(), gone = UUID()
        var changes: [JSON] = [
            Wire.change("habits", habit, at: Wire.at(0), record: Wire.habit()),
            Wire.change("habits", gone, at: Wire.at(0), record: Wire.habit(name: "Run")),
            Wire.change("reminders", UUID(), at: Wire.at(0), record: Wire.reminder(habit: habit)),
            Wire.change("dailyProgress", UUID(), at: Wire.at(0), record: Wire.progress(habit: habit, date: Wire.day(-1), count: 10)),
            Wire.change("dailyProgress", UUID(), at: Wire.at(0), record: Wire.progress(habit: habit, date: Wire.day(0), count: 3)),
            Wire.change("focusSessions", UUID(), at: Wire.at(0), record: Wire.focus()),
            Wire.change("selectedApps", UUID(), at: Wire.at(0), record: Wire.selectedApp()),
            Wire.change("userSettings", UUID(), at: Wire.at(0), record: Wire.settings()),
            Wire.change("xpTransactions", UUID(), at: Wire.at(0), record: Wire.xp()),
            Wire.change("achievements", UUID(), at: Wire.at(0), record: Wire.achievement()),
        ]
        for back in 0..<eventDays {
            var event = Wire.usageEvent()
            event["timestamp"] = WireTime.format(now.addingTimeInterval(-Double(back) * 86_400))
            changes.append(Wire.change("usageEvents", UUID(), at: Wire.at(0), record: event))
        }
        let first = try await device.push(changes)
        #expect(first.status == 200)
        #expect(first.results.allSatisfy { $0["status"] as? String == "applied" }, "\(first.results.filter { $0["status"] as? String != "applied" })")
        let second = try await device.push([
            Wire.change("habits", gone, at: Wire.at(60), record: nil),  // a tombstone
            Wire.change("habits", habit, at: Wire.at(-60), record: Wire.habit(name: "older")),  // superseded
            Wire.change("reminders", UUID(), at: Wire.at(0), record: Wire.reminder(habit: UUID())),  // rejected
        ])
        #expect(second.status(0) == "applied" && second.status(1) == "superseded" && second.status(2) == "rejected")
    }
}
