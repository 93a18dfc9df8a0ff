import Foundation
import HabitSyncDomain
import Testing

/// The part of a push decided before any database work: validation, grouping in apply order,
/// and how changes of one batch settle among themselves.
@Suite struct PushPlanTests {
    static let now = ChangeValidationTests.now
    static let context = ValidationContext.standalone(now: now)

    static func change(
        _ collection: String, id: UUID = UUID(), op: String = "upsert", at updatedAt: String = "2026-11-20T08:00:00.000Z",
        record: [String: JSONValue]?
    ) -> [String: JSONValue] {
        var fields: [String: JSONValue] = ["collection": .string(collection), "op": .string(op), "id": .string(id.uuidString), "updatedAt": .string(updatedAt)]
        if let record { fields["record"] = .object(record) }
        return fields
    }

    static func achievement(_ name: String, unlockedAt: String) -> [String: JSONValue] {
        ["achievementId": .string(name), "title": .string("T"), "description": .string("D"), "unlockedAt": .string(unlockedAt)]
    }

    static func event(_ type: String, at time: String = "2026-11-20T07:00:00.000Z") -> [String: JSONValue] {
        ["eventType": .string(type), "timestamp": .string(time), "pauseDuration": .number(0), "timerDuration": .number(60)]
    }

    @Test func changesAreValidatedAndGroupedInApplyOrderEachInBatchOrder() throws {
        let habit = UUID()
        let progress: [String: JSONValue] = ["habitId": .string(habit.uuidString), "date": .string("2026-11-20"), "progressCount": .number(1), "goalCount": .number(1)]
        let batch: [[String: JSONValue]] = [
            Self.change("dailyProgress", record: progress),  // 0
            Self.change("usageEvents", record: Self.event("exit_to_focus")),  // 1
            Self.change("habits", id: habit, record: ChangeValidationTests.habit),  // 2
            Self.change("globalStreak", record: [:]),  // 3: derived
            Self.change("dailyProgress", record: progress),  // 4
            ["collection": .string("habits")],  // 5: no op
        ]
        let plan = PushPlan(batch, context: Self.context)
        #expect(plan.steps.map(\.collection) == [.habits, .dailyProgress, .usageEvents])
        #expect(plan.steps.map { $0.changes.map(\.index) } == [[2], [0, 4], [1]])
        #expect(plan.rejected.map(\.index) == [3, 5])
        #expect(plan.rejected.map(\.rejection.field) == ["collection", "op"])
        #expect(plan.accepted.keys.sorted() == [0, 1, 2, 4])
        // Applying the plan's steps in order meets every habit before what refers to it.
        let order = SyncCollection.applyOrder
        let habits = try #require(order.firstIndex(of: .habits))
        #expect(try habits < #require(order.firstIndex(of: .reminders)))
        #expect(try habits < #require(order.firstIndex(of: .dailyProgress)))
    }

    @Test func anEmptyOrAllInvalidBatchPlansNoSteps() {
        #expect(PushPlan([], context: Self.context).steps.isEmpty)
        let plan = PushPlan([["op": .string("upsert")], [:]], context: Self.context)
        #expect(plan.steps.isEmpty)
        #expect(plan.rejected.count == 2)
    }

    @Test func theGreatestUpdatedAtWinsEachRecordAndATieGoesToTheLaterChange() throws {
        let a = UUID(), b = UUID()
        let batch = [
            Self.change("habits", id: a, at: "2026-11-20T08:00:00.002Z", record: ChangeValidationTests.habit),  // 0
            Self.change("habits", id: a, at: "2026-11-20T08:00:00.001Z", record: ChangeValidationTests.habit),  // 1: older
            Self.change("habits", id: b, at: "2026-11-20T08:00:00.005Z", record: ChangeValidationTests.habit),  // 2
            Self.change("habits", id: b, op: "delete", at: "2026-11-20T08:00:00.005Z", record: nil),  // 3: tie, later
            // Sub-millisecond differences do not count: keys compare to the millisecond, so this ties with 0 and, later, wins.
            Self.change("habits", id: a, at: "2026-11-20T08:00:00.0015Z", record: ChangeValidationTests.habit),  // 4
            Self.change("habits", id: a, at: "2026-11-20T08:00:00.0021Z", record: ChangeValidationTests.habit),  // 5
        ]
        let changes = try #require(PushPlan(batch, context: Self.context).steps.first?.changes)
        #expect(changes.count == 6)
        let winners = PushPlan.lastWriterWinners(changes) { $0.id }
        #expect(winners[a]?.index == 5)
        #expect(winners[b]?.index == 3)
        // A target other than the id (progress settles on its canonical id) groups across ids.
        let one = UUID()
        #expect(PushPlan.lastWriterWinners(changes) { _ in one }[one]?.index == 3)
        #expect(PushPlan.lastWriterWinners(Array(changes.prefix(2))) { _ in one }[one]?.index == 0)
    }

    @Test func appendOnlyKeepsTheFirstOfEachIDAndNamesTheContradictions() throws {
        let a = UUID(), b = UUID()
        let batch = [
            Self.change("usageEvents", id: a, record: Self.event("exit_to_focus")),  // 0
            Self.change("usageEvents", id: a, record: Self.event("exit_to_focus")),  // 1: the same again
            Self.change("usageEvents", id: a, record: Self.event("deepen_pause")),  // 2: other content
            Self.change("usageEvents", id: b, record: Self.event("exit_to_focus")),  // 3
        ]
        let changes = try #require(PushPlan(batch, context: Self.context).steps.first?.changes)
        #expect(changes.count == 4)
        let (first, contradicting) = PushPlan.firstOfEachID(changes)
        #expect(first[a]?.index == 0)
        #expect(first[b]?.index == 3)
        #expect(contradicting.map(\.index) == [2])
    }
}
