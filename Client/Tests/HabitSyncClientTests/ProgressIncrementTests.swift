import Foundation
import HabitSyncClient
import HabitSyncDomain
import Testing

/// The outbox records a day's completions as what changed (an increment), coalesces them, and
/// keeps what the user adds while a batch is out for the next one.
@Suite struct ProgressIncrementTests {
    static let habit = UUID()
    static let day = LocalDate(year: 2026, month: 11, day: 24)!

    static func envelope(_ batch: OutgoingBatch) throws -> [String: JSONValue] {
        guard case .object(let body) = try JSONParser.parse(batch.body) else { return [:] }
        return body
    }

    static func progressChange(_ batch: OutgoingBatch) throws -> [String: JSONValue]? {
        guard case .array(let changes)? = try envelope(batch)["changes"] else { return nil }
        for case .object(let change) in changes where change["collection"] == .string("dailyProgress") { return change }
        return nil
    }

    static func applied(_ batch: OutgoingBatch, version: Int = 7) -> Data {
        Data("{\"results\":[{\"index\":0,\"status\":\"applied\",\"serverVersion\":\(version)}]}".utf8)
    }

    @Test func completionsOfflineCoalesceIntoOneIncrement() throws {
        let clock = ManualClock()
        let store = try LocalStoreTests.store(clock)
        for _ in 0..<3 {
            clock.now += 1
            try store.addProgress(habitId: Self.habit, date: Self.day, goalCount: 1)
        }
        try store.addProgress(habitId: Self.habit, date: Self.day, amount: -1, goalCount: 1)
        #expect(try store.progress(habitId: Self.habit, date: Self.day)?.value.progressCount == 2)
        let batch = try #require(try store.nextBatch())
        #expect(try Self.envelope(batch)["protocolVersion"] == .number(2))
        let change = try #require(try Self.progressChange(batch))
        #expect(change["increment"] == .number(2), "three completions and one taken back, as one change")
        #expect(batch.changeCount == 1)
    }

    @Test func whatIsAddedWhileABatchIsOutGoesInTheNextOne() throws {
        let clock = ManualClock()
        let store = try LocalStoreTests.store(clock)
        try store.addProgress(habitId: Self.habit, date: Self.day, goalCount: 1)
        let first = try #require(try store.nextBatch())
        #expect(try Self.progressChange(first)?["increment"] == .number(1))
        clock.now += 1
        try store.addProgress(habitId: Self.habit, date: Self.day, goalCount: 1)
        // The same batch again until answered: byte for byte.
        #expect(try store.nextBatch()?.body == first.body)
        _ = try store.settle(first, responseBody: Self.applied(first))
        let second = try #require(try store.nextBatch())
        #expect(try Self.progressChange(second)?["increment"] == .number(1), "only the completion made while the first was out")
        _ = try store.settle(second, responseBody: Self.applied(second, version: 8))
        #expect(try store.nextBatch() == nil)
    }

    @Test func aSetIsSentWholeAndTakesLaterAdditionsIn() throws {
        let clock = ManualClock()
        let store = try LocalStoreTests.store(clock)
        try store.addProgress(habitId: Self.habit, date: Self.day, goalCount: 1)
        clock.now += 1
        try store.setProgress(habitId: Self.habit, date: Self.day, count: 5, goalCount: 1)
        clock.now += 1
        try store.addProgress(habitId: Self.habit, date: Self.day, goalCount: 1)
        let batch = try #require(try store.nextBatch())
        let change = try #require(try Self.progressChange(batch))
        #expect(change["increment"] == nil)
        #expect(try Self.envelope(batch)["protocolVersion"] == nil, "a batch without increments is a protocol 1 batch")
        guard case .object(let record)? = change["record"] else { Issue.record("no record"); return }
        #expect(record["progressCount"] == .number(6))
    }

    @Test func editingAnotherFieldOfTheDaySendsNoCount() throws {
        let clock = ManualClock()
        let store = try LocalStoreTests.store(clock)
        let saved = try store.addProgress(habitId: Self.habit, date: Self.day, goalCount: 1)
        let first = try #require(try store.nextBatch())
        _ = try store.settle(first, responseBody: Self.applied(first))
        var edited = saved.value
        edited.difficulty = 4
        clock.now += 1
        try store.save(edited, id: saved.id)
        let second = try #require(try store.nextBatch())
        let change = try #require(try Self.progressChange(second))
        #expect(change["increment"] == .number(0), "the count did not change: a concurrent completion elsewhere is not overwritten")
    }
}
