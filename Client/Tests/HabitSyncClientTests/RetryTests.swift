import Foundation
import HabitSyncClient
import HabitSyncDomain
import Testing

@Suite struct RetryTests {
    @Test func delaysGrowWithJitterAreCappedAndRespectRetryAfter() {
        let policy = RetryPolicy(baseSeconds: 1, maximumSeconds: 60, maximumAttempts: 10)
        #expect(policy.delay(attempt: 0, retryAfter: nil, random: 1) == 1)
        #expect(policy.delay(attempt: 0, retryAfter: nil, random: 0) == 0.5)
        #expect(policy.delay(attempt: 3, retryAfter: nil, random: 1) == 8)
        #expect(policy.delay(attempt: 3, retryAfter: nil, random: 0) == 4)
        #expect(policy.delay(attempt: 20, retryAfter: nil, random: 1) == 60)
        #expect(policy.delay(attempt: 1_000, retryAfter: nil, random: 1) == 60)
        #expect(policy.delay(attempt: 0, retryAfter: 30, random: 0) == 30)
        for attempt in 0..<12 {
            let delay = policy.delay(attempt: attempt, retryAfter: nil, random: Double.random(in: 0...1))
            #expect(delay >= 0.5 && delay <= 60)
        }
    }

    /// Records the waits instead of sleeping.
    actor Waits {
        var seconds: [Double] = []
        func add(_ value: Double) { seconds.append(value) }
    }

    @Test func anUnreachableServerIsRetriedAndTheBatchStaysTheSame() async throws {
        let store = try LocalStore(path: nil, deviceID: "phone")
        try store.save(.habits, fields: LocalStoreTests.habit)
        // Port 1 on loopback: nothing listens, the connection is refused at once.
        let engine = SyncEngine(store: store, baseURL: try #require(URL(string: "http://127.0.0.1:1/"))) { "token" }
        let waits = Waits()
        await #expect(throws: URLError.self) {
            try await engine.syncRetrying(policy: RetryPolicy(baseSeconds: 1, maximumSeconds: 60, maximumAttempts: 4)) { await waits.add($0) }
        }
        let recorded = await waits.seconds
        #expect(recorded.count == 3)
        #expect(zip(recorded, [1.0, 2.0, 4.0]).allSatisfy { $0 >= $1 / 2 && $0 <= $1 })
        let batch = try #require(try store.nextBatch())
        #expect(try store.nextBatch() == batch)
        #expect(try store.record(.habits, id: try #require(store.records(.habits).first?.id))?.syncStatus == .pending)
    }
}
