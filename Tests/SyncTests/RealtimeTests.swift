import Foundation
import HabitSyncAuth
import HabitSyncClient
import HabitSyncDomain
import HabitSyncServer
import LibPQClient
import ServerHarness
import SyncTestSupport
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `GET /v1/sync/events` against the real server and PostgreSQL: events cross replicas through
/// LISTEN/NOTIFY, reach only the user's own streams, survive a lost listener connection with a
/// "pull now", and streams are bounded and drained. Every wait is for a message, never a time.
@Suite struct RealtimeTests {
    typealias Events = RealtimeKit.Events

    static func configuration(_ adjust: (inout RealtimeLimits) -> Void = { _ in }) -> ServerConfiguration {
        var configuration = ServerConfiguration.forTests
        adjust(&configuration.realtime)
        return configuration
    }

    /// Pushes a habit (and pulls to the end); returns the user's newest version, which the
    /// push's event names (the push also writes the derived records).
    /// The next `close` event, anything before it skipped (a `pull` from the listener's first
    /// connection may come first).
    static func nextClose(_ events: inout Events) async throws -> (name: String, id: String?, data: String)? {
        while let event = try await RealtimeKit.nextEvent(&events) {
            if event.name == "close" { return event }
        }
        return nil
    }

    static func pushHabit(_ engine: SyncEngine, name: String = "Read") async throws -> Int64 {
        try engine.store.save(Habit(name: name, startDate: LocalDate(year: 2026, month: 11, day: 1)!))
        _ = try await engine.sync()
        return try SyncCollection.allCases.flatMap { try engine.store.records($0, includingDeleted: true) }.compactMap(\.serverVersion).max() ?? 0
    }

    @Test func aPushOnOneReplicaReachesTheUsersOtherDevicesOnAnother() async throws {
        let world = try await SyncWorld.make()
        try await world.serve(Self.configuration()) { replicaA in
            try await world.serve(Self.configuration()) { replicaB in
                try await RealtimeKit.waitUntilListening(replicaA)
                try await RealtimeKit.waitUntilListening(replicaB)
                let phone = try await RealtimeKit.engine(world, replicaA, user: "ada", device: "phone")
                let watch = try await RealtimeKit.engine(world, replicaB, user: "ada", device: "watch")
                let tablet = try await RealtimeKit.engine(world, replicaA, user: "ada", device: "tablet")
                var watchEvents = try await RealtimeKit.open(watch)
                var phoneEvents = try await RealtimeKit.open(phone)

                let version = try await Self.pushHabit(phone)
                let event = try #require(try await RealtimeKit.nextEvent(&watchEvents))
                #expect(event.name == "change" && event.id == String(version))
                #expect(event.data == #"{"serverVersion":\#(version),"collections":["habits"]}"#)

                // The pushing device is not told of its own push: its first event is the tablet's.
                let tabletVersion = try await Self.pushHabit(tablet, name: "Walk")
                let phoneEvent = try #require(try await RealtimeKit.nextEvent(&phoneEvents))
                #expect(phoneEvent.id == String(tabletVersion))
                // Replica B heard both pushes from PostgreSQL and wrote change events.
                let metrics = try parsePrometheusText(try await replicaB.get("/metrics").text)
                #expect(metrics["habitsync_realtime_notifications_received_total"] ?? 0 >= 2)
                #expect(metrics[#"habitsync_realtime_events_sent_total{kind="change"}"#] ?? 0 >= 1)
            }
        }
    }

    @Test func streamsOfOtherUsersAndTenantsHearNothing() async throws {
        let world = try await SyncWorld.make()
        let otherTenant = try await world.addTenant("globex")
        try await world.serve(Self.configuration()) { server in
            try await RealtimeKit.waitUntilListening(server)
            let ada = try await RealtimeKit.engine(world, server, user: "ada", device: "phone")
            let grace = try await RealtimeKit.engine(world, server, user: "grace", device: "phone")
            // The same user id in another tenant is another person.
            let otherAda = try await RealtimeKit.engine(world, server, user: "ada", device: "phone", tenant: otherTenant)
            var graceEvents = try await RealtimeKit.open(grace)
            var otherAdaEvents = try await RealtimeKit.open(otherAda)
            _ = try await Self.pushHabit(ada)
            _ = try await Self.pushHabit(ada, name: "Walk")
            // Each one's first event is its own next push, not ada's.
            let graceVersion = try await Self.pushHabit(try await RealtimeKit.engine(world, server, user: "grace", device: "watch"))
            let otherVersion = try await Self.pushHabit(try await RealtimeKit.engine(world, server, user: "ada", device: "watch", tenant: otherTenant))
            #expect(try await RealtimeKit.nextEvent(&graceEvents)?.id == String(graceVersion))
            #expect(try await RealtimeKit.nextEvent(&otherAdaEvents)?.id == String(otherVersion))
        }
    }

    @Test func aReconnectingDeviceThatIsBehindHearsAtOnce() async throws {
        let world = try await SyncWorld.make()
        try await world.serve(Self.configuration { $0.heartbeat = .milliseconds(50) }) { server in
            // Once listening: the listener's first connection tells open streams to pull.
            try await RealtimeKit.waitUntilListening(server)
            let phone = try await RealtimeKit.engine(world, server, user: "ada", device: "phone")
            let version = try await Self.pushHabit(phone)
            let watch = try await RealtimeKit.engine(world, server, user: "ada", device: "watch")
            var behind = try await RealtimeKit.open(watch, lastEventID: "0")
            let event = try #require(try await RealtimeKit.nextEvent(&behind))
            #expect(event.name == "change" && event.id == String(version))
            // Up to date: the first thing after `connected` is a heartbeat, not an event.
            var current = try await RealtimeKit.open(watch, lastEventID: String(version))
            #expect(try await current.next() == .comment("heartbeat"))
            // A bad Last-Event-ID is a 400 naming it.
            let reply = try await TestHTTP.request(
                "GET", server.baseURL + "/v1/sync/events?lastEventId=-1",
                headers: ["Authorization": "Bearer \(try await world.token(user: "ada"))"])
            #expect(reply.status == 400 && reply.text.contains("Last-Event-ID"))
        }
    }

    @Test func aLostListenerConnectionTellsEveryStreamToPullAndMissesNothingAfter() async throws {
        let world = try await SyncWorld.make()
        try await world.serve(Self.configuration()) { server in
            try await RealtimeKit.waitUntilListening(server)
            let watch = try await RealtimeKit.engine(world, server, user: "ada", device: "watch")
            let tablet = try await RealtimeKit.engine(world, server, user: "grace", device: "tablet")
            var watchEvents = try await RealtimeKit.open(watch)
            var tabletEvents = try await RealtimeKit.open(tablet)
            // As PostgreSQL restarting would: the listener's backend goes away.
            let terminated = try await world.database.withPool(size: 1) { pool in
                try await pool.withConnection {
                    try await $0.query(
                        """
                        SELECT count(pg_terminate_backend(pid))::int8 AS n FROM pg_stat_activity
                        WHERE datname = current_database() AND application_name LIKE '%-listener'
                        """
                    ).single().decode("n", as: Int64.self)
                }
            }
            #expect(terminated == 1)
            let pull = try #require(try await RealtimeKit.nextEvent(&watchEvents))
            #expect(pull.name == "pull" && pull.data.contains("listener_reconnected"))
            #expect(try await RealtimeKit.nextEvent(&tabletEvents)?.name == "pull")
            // Listening again: the next push is heard.
            let version = try await Self.pushHabit(try await RealtimeKit.engine(world, server, user: "ada", device: "phone"))
            #expect(try await RealtimeKit.nextEvent(&watchEvents)?.id == String(version))
            let metrics = try await server.get("/metrics").text
            #expect(metrics.contains("habitsync_realtime_listener_reconnects_total 1"))
        }
    }

    @Test func streamsBeyondTheLimitsAre429() async throws {
        let world = try await SyncWorld.make()
        try await world.serve(
            Self.configuration {
                $0.streamsPerUser = 2; $0.streams = 3
            }
        ) { server in
            let ada = try await RealtimeKit.engine(world, server, user: "ada", device: "phone")
            var open = [try await RealtimeKit.open(ada), try await RealtimeKit.open(ada)]
            var third = try await ada.serverEvents().makeAsyncIterator()
            await #expect(throws: SyncError.retryLater(seconds: 5)) { _ = try await third.next() }
            // Another user still gets one, up to the server's limit.
            let grace = try await RealtimeKit.engine(world, server, user: "grace", device: "phone")
            open.append(try await RealtimeKit.open(grace))
            var fourth = try await grace.serverEvents().makeAsyncIterator()
            await #expect(throws: SyncError.retryLater(seconds: 5)) { _ = try await fourth.next() }
            #expect(open.count == 3)
        }
    }

    @Test func streamsEndWithARetryHintAtTheirLifetimeAndOnShutdown() async throws {
        let world = try await SyncWorld.make()
        let lifetime = try await world.serve(Self.configuration { $0.maximumLifetime = .milliseconds(200) }) { server in
            var events = try await RealtimeKit.open(try await RealtimeKit.engine(world, server, user: "ada", device: "phone"))
            return try await Self.nextClose(&events)
        }
        #expect(lifetime?.name == "close" && lifetime?.data.contains("lifetime") == true)
        // Heartbeats do not count as events: a quiet stream still ends when idle.
        let idle = try await world.serve(
            Self.configuration {
                $0.idleLifetime = .milliseconds(300); $0.heartbeat = .milliseconds(50)
            }
        ) { server in
            var events = try await RealtimeKit.open(try await RealtimeKit.engine(world, server, user: "ada", device: "phone"))
            return try await Self.nextClose(&events)
        }
        #expect(idle?.name == "close" && idle?.data.contains("idle") == true)

        // SIGTERM's drain: the server shuts down with a stream open; the stream is told why and
        // ends, and the shutdown does not wait for it.
        let reader = try await world.serve(Self.configuration()) { server in
            let stream = try await RealtimeKit.engine(world, server, user: "ada", device: "phone").serverEvents()
            let (connected, isConnected) = AsyncStream<Void>.makeStream()
            let reader = Task { () -> [ServerSentEvent] in
                var messages: [ServerSentEvent] = []
                for try await message in stream {
                    messages.append(message)
                    isConnected.yield()
                }
                return messages
            }
            for await _ in connected { break }
            return reader
        }
        let messages = try await reader.value
        #expect(messages.first == .comment("connected"))
        #expect(messages.contains { if case .event("close", _, let data) = $0 { data.contains("shutting_down") } else { false } })
    }

    @Test func anSDKDeviceFollowingTheStreamPullsAnotherDevicesChange() async throws {
        let world = try await SyncWorld.make()
        try await world.serve(Self.configuration()) { server in
            try await RealtimeKit.waitUntilListening(server)
            let phone = try await RealtimeKit.engine(world, server, user: "ada", device: "phone")
            let watch = try await RealtimeKit.engine(world, server, user: "ada", device: "watch")
            // No periodic sync to speak of: only the stream can bring the watch's habit.
            var results = AutoSync(engine: phone, debounce: .zero, interval: .seconds(86_400), realtime: true).start().makeAsyncIterator()
            for _ in 0..<3000 {
                if try await server.get("/metrics").text.contains("habitsync_realtime_streams_open 1") { break }
                try await Task.sleep(for: .milliseconds(10))
            }
            let walk = try watch.store.save(Habit(name: "Walk", startDate: LocalDate(year: 2026, month: 11, day: 1)!))
            _ = try await watch.sync()
            var seen = false
            for _ in 0..<10 where !seen {
                _ = try #require(await results.next()).get()
                seen = try phone.store.fetch(Habit.self, id: walk.id) != nil
            }
            #expect(seen)
        }
    }
}
