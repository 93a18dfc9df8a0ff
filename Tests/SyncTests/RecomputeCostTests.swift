import Foundation
import HabitSyncDomain
import SyncTestSupport
import TestSupport
import Testing

/// Derived state is a full per-user recompute: this measures what a push costs with a year of
/// history against a push with none (printed, never asserted: machines here are noisy).
@Suite struct RecomputeCostTests {
    @Test func measuresAPushAgainstAYearOfHistory() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let today = LocalDate(Date(), in: TimeZone(identifier: "UTC")!)
            let fresh = try await world.client(server, user: "fresh")
            let veteran = try await world.client(server, user: "veteran")
            let habits = (0..<5).map { _ in UUID() }
            let start = today.adding(days: -364)
            var history = habits.map { Wire.change("habits", $0, at: Wire.at(0), record: Wire.habit().merging(["startDate": start.description, "goalCount": 1]) { _, n in n }) }
            for offset in 0..<365 {
                for habit in habits {
                    history.append(
                        Wire.change("dailyProgress", UUID(), at: Wire.at(1), record: ["habitId": habit.uuidString, "date": start.adding(days: offset).description, "progressCount": 1, "goalCount": 1]))
                }
            }
            var index = 0
            while index < history.count {
                let reply = try await veteran.push(Array(history[index..<min(index + 1000, history.count)]))
                #expect(reply.status == 200)
                index += 1000
            }
            let freshHabit = UUID()
            _ = try await fresh.push([Wire.change("habits", freshHabit, at: Wire.at(0), record: Wire.habit().merging(["startDate": today.description, "goalCount": 1]) { _, n in n })])

            func medianPush(_ client: SyncClient, habit: UUID) async throws -> Double {
                var samples: [Double] = []
                for round in 0..<7 {
                    let clock = ContinuousClock()
                    let started = clock.now
                    let reply = try await client.push([
                        Wire.change(
                            "dailyProgress", UUID(), at: Wire.at(Double(100 + round)),
                            record: ["habitId": habit.uuidString, "date": today.description, "progressCount": round % 2, "goalCount": 1])
                    ])
                    #expect(reply.status == 200)
                    let elapsed = clock.now - started
                    samples.append(elapsed / .milliseconds(1))
                }
                return samples.sorted()[samples.count / 2]
            }
            let freshMedian = try await medianPush(fresh, habit: freshHabit)
            let veteranMedian = try await medianPush(veteran, habit: habits[0])
            print(
                String(
                    format: "derived-state recompute: one-change push median %.1f ms with no history, %.1f ms with 365 days × 5 habits (1825 progress rows); ratio %.1f",
                    freshMedian, veteranMedian, veteranMedian / max(freshMedian, 0.001)))
            let streak = try await veteran.state().values.first { $0["collection"] as? String == "globalStreak" }?["record"] as? JSON
            #expect(streak?["longestStreak"] as? Int ?? 0 >= 364)
        }
    }
}
