import Foundation
import HabitSyncAuth
import HabitSyncDomain
import HabitSyncServer
import HabitSyncStore
import LibPQClient
import ServerHarness
import SyncTestSupport
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A push body's memory: a body is refused before it can build a huge tree, and push bodies
/// being decoded share the server's budget (`--decode-budget`): beyond it 503 with
/// `Retry-After`, one that alone needs more than all of it 413.
@Suite struct PushBodyMemoryTests {
    @Test func aBodyThatWouldBuildAHugeTreeIsRefusedBeforeItIsBuilt() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let device = try await world.client(server, user: "alice")
            let zeros = "[" + Array(repeating: "0", count: 3_000_000).joined(separator: ",") + "]"
            let body =
                #"{"batchId":"\#(UUID().uuidString)","changes":[{"collection":"habits","op":"upsert","id":"\#(UUID().uuidString)","updatedAt":"2026-11-20T08:15:30Z","record":{"name":\#(zeros)}}]}"#
            let reply = try await device.pushRaw(Data(body.utf8))
            #expect(reply.status == 413)
            #expect((reply.json["error"] as? JSON)?["code"] as? String == "too_large")
            let deep = String(repeating: "[", count: 100_000)
            let nested = try await device.pushRaw(Data(#"{"batchId":"\#(UUID().uuidString)","changes":\#(deep)"#.utf8))
            #expect(nested.status == 413)
        }
    }

    @Test func pushesBeyondTheDecodingBudgetAre503WithRetryAfter() async throws {
        let world = try await SyncWorld.make()
        func body(_ changes: Int) throws -> Data {
            try JSONSerialization.data(withJSONObject: [
                "batchId": UUID().uuidString,
                "changes": (0..<changes).map { _ in Wire.change("usageEvents", UUID(), at: Wire.at(0), record: Wire.usageEvent()) },
            ])
        }
        let large = try body(400), bobs = try body(200)
        // Room for Alice's large push, not for Bob's beside it; each alone fits.
        // The tests' generous slow-client limits: a loaded machine must not cut Alice's upload off.
        var configuration = ServerConfiguration.forTests
        configuration.bodyBudgetBytes = RequestBodyBudget.estimate(bodyBytes: large.count) + RequestBodyBudget.estimate(bodyBytes: bobs.count) / 2
        try await world.serve(configuration) { server in
            let alice = try await world.client(server, user: "alice")
            let bob = SyncClient(baseURL: server.baseURL, token: try await world.token(user: "bob"), device: "phone", connections: 1)
            #expect(try await alice.push([Wire.change("habits", UUID(), at: Wire.at(0), record: Wire.habit())]).status == 200)
            // Alice's large push reserves its share and then waits for her row lock, held here.
            let pending = try await world.holdingUserLock("alice") {
                let pending = Task { try await alice.pushRaw(large).status }
                try await world.waitForLockWaiters(1)
                let refused = try await bob.pushRaw(bobs, allowUnavailable: true)
                #expect(refused.status == 503)
                #expect((refused.json["error"] as? JSON)?["code"] as? String == "busy")
                return pending
            }
            #expect(try await pending.value == 200)
            // With the budget free again, Bob is served.
            #expect(try await bob.pushRaw(bobs).status == 200)
        }
    }

    /// A push that alone needs more than the whole budget is 413, which no retry cures; it is
    /// never admitted past the budget (the old rule let one in whenever nothing else was held).
    @Test func aPushLargerThanTheWholeBudgetIs413() async throws {
        let world = try await SyncWorld.make()
        var configuration = ServerConfiguration.forTests
        configuration.bodyBudgetBytes = 1 << 20
        try await world.serve(configuration) { server in
            let alice = try await world.client(server, user: "alice")
            let changes = (0..<400).map { _ in Wire.change("usageEvents", UUID(), at: Wire.at(0), record: Wire.usageEvent()) }
            let reply = try await alice.push(changes)
            #expect(reply.status == 413)
            #expect((reply.json["error"] as? JSON)?["code"] as? String == "too_large")
            #expect(try await alice.push(Array(changes.prefix(10))).status == 200)
        }
    }

    /// Gzip bodies reserve by their real size once inflated, not the largest possible body:
    /// otherwise every gzip push would take the whole budget and they would run one at a time.
    @Test func smallGzipPushesShareTheBudget() async throws {
        let world = try await SyncWorld.make()
        try await world.serve(.forTests) { server in
            let alice = try await world.client(server, user: "alice")
            let bob = SyncClient(baseURL: server.baseURL, token: try await world.token(user: "bob"), device: "phone", connections: 1)
            #expect(try await alice.push([Wire.change("habits", UUID(), at: Wire.at(0), record: Wire.habit())]).status == 200)
            func gzipped(_ changes: [JSON]) async throws -> Data {
                try await gzip(try JSONSerialization.data(withJSONObject: ["batchId": UUID().uuidString, "changes": changes]))
            }
            let aliceBody = try await gzipped([Wire.change("habits", UUID(), at: Wire.at(1), record: Wire.habit())])
            let bobBody = try await gzipped([Wire.change("habits", UUID(), at: Wire.at(1), record: Wire.habit())])
            let pending = try await world.holdingUserLock("alice") {
                let pending = Task { try await alice.pushRaw(aliceBody, headers: ["Content-Encoding": "gzip"]).status }
                try await world.waitForLockWaiters(1)
                // Alice's gzip push holds its reservation while it waits; Bob's is admitted too.
                let reply = try await bob.pushRaw(bobBody, headers: ["Content-Encoding": "gzip"])
                #expect(reply.status == 200, "\(reply.json)")
                return pending
            }
            #expect(try await pending.value == 200)
        }
    }
}
