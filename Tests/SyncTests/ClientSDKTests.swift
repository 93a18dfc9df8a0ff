import Foundation
import HabitSyncClient
import HabitSyncDomain
import LibPQClient
import ServerHarness
import SyncTestSupport
import Synchronization
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The device SDK against the real server and PostgreSQL: two devices of one user, each with
/// its own store, converge; conflicts and rejections reach the device as the protocol says.
@Suite struct ClientSDKTests {
    /// A device clock the test sets; starts at the real time (the server clamps the future).
    final class DeviceClock: @unchecked Sendable {
        // Safe: only the test's own task moves it, between the calls that read it.
        var now = Date()
    }

    static let habit: [String: JSONValue] = [
        "name": .string("Read"), "habitType": .string("formation"), "goalCount": .number(1), "goalUnit": .string("pages"),
        "schedule": .object(["type": .string("daily")]), "startDate": .string(Wire.day(-19)),
    ]

    static func device(_ world: SyncWorld, _ server: RunningServer, _ name: String, clock: DeviceClock) async throws -> SyncEngine {
        let store = try LocalStore(path: nil, deviceID: name, now: { clock.now })
        let token = try await world.token(user: "ada")
        guard let base = URL(string: server.baseURL + "/") else { throw SyncProtocolError.malformedResponse }
        return SyncEngine(store: store, baseURL: base, transport: URLSessionTransport.patient()) { token }
    }

    /// A phone and a watch of one user sharing a clock.
    static func phoneAndWatch(_ world: SyncWorld, _ server: RunningServer) async throws -> (phone: SyncEngine, watch: SyncEngine) {
        let clock = DeviceClock()
        return (try await device(world, server, "phone", clock: clock), try await device(world, server, "watch", clock: clock))
    }

    static let day = LocalDate(year: 2026, month: 11, day: 1)!

    static func named(_ name: String) -> [String: JSONValue] {
        var fields = habit
        fields["name"] = .string(name)
        return fields
    }

    /// The SDK's sessions and the harness's have no response cache. With one, FoundationNetworking
    /// on Linux looks a data task up in the cache on another queue before the task has its
    /// protocol, and a cancel in that window traps the process ("a task that in not in the
    /// registry"): the whole suite crashed so once, in a cancelled test request.
    @Test func sessionsHaveNoResponseCache() {
        #expect(URLSessionTransport().session.configuration.urlCache == nil)
        #expect(URLSessionTransport.uncachedConfiguration().urlCache == nil)
        #expect(UncachedURLSession.shared.configuration.urlCache == nil)
        #expect(UncachedURLSession.configuration().urlCache == nil)
    }

    @Test func twoDevicesConvergeAndLearnOfConflictsAndRejections() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let phoneClock = DeviceClock(), watchClock = DeviceClock()
            let phone = try await Self.device(world, server, "phone", clock: phoneClock)
            let watch = try await Self.device(world, server, "watch", clock: watchClock)

            let habit = UUID()
            try phone.store.save(.habits, id: habit, fields: Self.habit)
            let first = try await phone.sync()
            #expect(first.pushed.applied == 1 && first.batches == 1)
            _ = try await watch.sync()
            #expect(try watch.store.record(.habits, id: habit)?.fields?["name"] == .string("Read"))
            #expect(try watch.store.record(.habits, id: habit)?.syncStatus == .synced)

            // Both edit offline; the phone's edit is the later one but reaches the server first.
            watchClock.now = Date()
            try watch.store.save(.habits, id: habit, fields: Self.named("Watch's"))
            phoneClock.now = Date().addingTimeInterval(2)
            try phone.store.save(.habits, id: habit, fields: Self.named("Phone's"))
            #expect(try await phone.sync().pushed.applied == 1)
            let watchSync = try await watch.sync()
            #expect(watchSync.pushed.conflicts.map(\.winnerUpdatedBy) == ["phone"])
            for device in [phone, watch] {
                let record = try #require(try device.store.record(.habits, id: habit))
                #expect(record.fields?["name"] == .string("Phone's"))
                #expect(record.syncStatus == .synced)
                #expect(try device.store.pendingCount() == 0)
            }

            // The watch deletes the habit; the phone, not yet told, records progress on it.
            watchClock.now = Date().addingTimeInterval(3)
            try watch.store.delete(.habits, id: habit)
            _ = try await watch.sync()
            let progress = UUID()
            try phone.store.save(
                .dailyProgress, id: progress,
                fields: [
                    "habitId": .string(habit.uuidString), "date": .string(Wire.day(0)), "progressCount": .number(1), "goalCount": .number(1),
                ])
            let phoneSync = try await phone.sync()
            #expect(phoneSync.pushed.rejected.map(\.failure.code) == ["unknown_reference"])
            let failed = try #require(try phone.store.record(.dailyProgress, id: progress))
            #expect(failed.syncStatus == .failed && failed.failure?.field == "habitId")
            #expect(try phone.store.record(.habits, id: habit)?.isDeleted == true)
            #expect(try phone.store.pendingCount() == 0)
        }
    }

    @Test func aBatchWhoseAnswerWasLostIsSentAgainAndSettlesOnce() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let clock = DeviceClock()
            let phone = try await Self.device(world, server, "phone", clock: clock)
            let habit = UUID()
            try phone.store.save(.habits, id: habit, fields: Self.habit)
            // The batch reaches the server, its answer never reaches the device.
            let batch = try #require(try phone.store.nextBatch())
            var request = URLRequest(url: try #require(URL(string: server.baseURL + "/v1/sync/push")))
            request.httpMethod = "POST"
            request.timeoutInterval = 900  // as the patient transport: a loaded run outlived 60 s
            request.httpBody = batch.body
            request.setValue("Bearer \(try await world.token(user: "ada"))", forHTTPHeaderField: "Authorization")
            request.setValue("phone", forHTTPHeaderField: "X-Device-Id")
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            let (_, response) = try await UncachedURLSession.shared.data(for: request)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(try phone.store.record(.habits, id: habit)?.syncStatus == .pending)

            // The next sync sends the same bytes; the server answers as the first time.
            let report = try await phone.sync()
            #expect(report.batches == 1 && report.pushed.applied == 1)
            let record = try #require(try phone.store.record(.habits, id: habit))
            #expect(record.syncStatus == .synced && record.serverVersion != nil)
            let stored = try await world.database.withPool(size: 1) { pool in
                try await pool.withConnection { try await $0.query("SELECT count(*)::int8 AS n FROM habits WHERE user_id = 'ada'").single().decode("n", as: Int64.self) }
            }
            #expect(stored == 1)
        }
    }

    /// Sync by itself: a local write is pushed without the app asking, and a realtime signal
    /// (or the periodic tick) pulls what another device did. The test waits for the syncs'
    /// results, not for a time.
    @Test func autoSyncPushesAfterLocalWritesAndPullsOnASignalAndPeriodically() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let clock = DeviceClock()
            let phone = try await Self.device(world, server, "phone", clock: clock)
            let watch = try await Self.device(world, server, "watch", clock: clock)
            let day = try #require(LocalDate(Wire.day(-19)))
            let autoSync = AutoSync(engine: phone, debounce: .zero, interval: .seconds(86_400))
            var results = autoSync.start().makeAsyncIterator()

            let mine = try phone.store.save(Habit(name: "Stretch", startDate: day))
            let first = try #require(await results.next()).get()
            #expect(first.pushed.applied == 1)
            #expect(try phone.store.fetch(Habit.self, id: mine.id)?.syncStatus == .synced)

            let theirs = try watch.store.save(Habit(name: "Walk", startDate: day))
            _ = try await watch.sync()
            autoSync.signal()
            // Syncs the phone's own push set off (its realtime event, the first tick) may come
            // first and find nothing new: the signal's sync is one of the next few.
            var pulledTheirs = false
            for _ in 0..<10 where !pulledTheirs {
                _ = try #require(await results.next()).get()
                pulledTheirs = try phone.store.fetch(Habit.self, id: theirs.id)?.value.name == "Walk"
            }
            #expect(pulledTheirs)

            // A tablet that syncs only by its clock, every 10 ms: one of its syncs brings the
            // watch's next habit (bounded by a count of syncs, not by a deadline).
            let tablet = try await Self.device(world, server, "tablet", clock: clock)
            var ticks = AutoSync(engine: tablet, debounce: .zero, interval: .milliseconds(10)).start().makeAsyncIterator()
            let later = try watch.store.save(Habit(name: "Swim", startDate: day))
            _ = try await watch.sync()
            var seen = false
            for _ in 0..<1000 where !seen {
                _ = try #require(await ticks.next()).get()
                seen = try tablet.store.fetch(Habit.self, id: later.id) != nil
            }
            #expect(seen)
        }
    }

    /// A pull without a cursor (a device's first, or one starting over after `410`) skips the
    /// tombstones of records deleted before it began. A device that pushed records before that
    /// pull began (its earlier pulls failed) holds them as synced: if another device deleted one
    /// meanwhile, the fresh pull must still take it away. Found by the convergence suite in CI.
    @Test func aFirstPullTakesAwayWhatTheDevicePushedAndAnotherDeletedBeforeIt() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let clock = DeviceClock()
            let pulls = PullSwitch()
            let token = try await world.token(user: "ada")
            guard let base = URL(string: server.baseURL + "/") else { throw SyncProtocolError.malformedResponse }
            let phone = SyncEngine(store: try LocalStore(path: nil, deviceID: "phone", now: { clock.now }), baseURL: base, transport: pulls) { token }
            let watch = try await Self.device(world, server, "watch", clock: clock)

            /// The phone's push of `habit` lands, its pull does not (the app was killed, the
            /// network dropped); the watch deletes `habit`; the phone's next pull, from scratch,
            /// must take it away and keep `kept`.
            func deletedBeforeThePhonesPull(_ habit: UUID, kept: UUID) async throws {
                pulls.failing = true
                await #expect(throws: URLError.self) { try await phone.sync() }
                #expect(try phone.store.fetch(Habit.self, id: habit)?.syncStatus == .synced)
                #expect(try phone.store.pullCursor() == nil)
                _ = try await watch.sync()
                try watch.store.delete(Habit.self, id: habit)
                #expect(try await watch.sync().pushed.applied == 1)
                pulls.failing = false
                _ = try await phone.sync()
                #expect(try phone.store.fetch(Habit.self, id: habit) == nil, "the phone still holds a habit the server deleted")
                #expect(try phone.store.fetch(Habit.self, id: kept)?.syncStatus == .synced)
            }

            // The phone's first pull.
            let kept = try phone.store.save(Habit(name: "Kept", startDate: Self.day)).id
            try await deletedBeforeThePhonesPull(try phone.store.save(Habit(name: "Doomed", startDate: Self.day)).id, kept: kept)
            // A pull starting over after a 410: what the phone pushed after dropping its cursor.
            try phone.store.resetPullCursor()
            try await deletedBeforeThePhonesPull(try phone.store.save(Habit(name: "Later", startDate: Self.day)).id, kept: kept)
        }
    }

    /// URLSession, but pulls fail while `failing` is set (pushes always go through).
    final class PullSwitch: SyncTransport {
        private let state = Mutex(false)
        let inner = URLSessionTransport.patient()

        var failing: Bool {
            get { state.withLock { $0 } }
            set { state.withLock { $0 = newValue } }
        }

        func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
            if failing, request.url?.path.hasSuffix("/sync/pull") == true { throw URLError(.networkConnectionLost) }
            return try await inner.send(request)
        }
    }

    /// "Delete my account" in the app: the server erases everything; the user's other device
    /// learns it on its next sync (a distinct error, its pull cursor untouched) and its
    /// AutoSync stops.
    @Test func deletingTheAccountStopsTheOtherDevices() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let (phone, watch) = try await Self.phoneAndWatch(world, server)
            let day = Self.day
            let habit = try phone.store.save(Habit(name: "Stretch", startDate: day))
            _ = try await phone.sync()
            _ = try await watch.sync()
            let cursor = try watch.store.pullCursor()

            let exported = try JSONSerialization.jsonObject(with: try await phone.exportAccount()) as? [String: Any]
            #expect((exported?["changes"] as? [[String: Any]])?.contains { $0["id"] as? String == habit.id.uuidString.lowercased() } == true)
            let rows = try await phone.deleteAccount()
            #expect(rows["habits"] == 1 && rows["users"] == 1)

            _ = try watch.store.save(Habit(name: "Offline edit", startDate: day))
            await #expect(throws: SyncError.accountErased) { try await watch.sync() }
            #expect(try watch.store.pullCursor() == cursor, "an erased account is not a cursor to start over from")
            let autoSync = AutoSync(engine: watch, debounce: .zero, interval: .seconds(86_400))
            var results = autoSync.start().makeAsyncIterator()
            autoSync.signal()
            let last = try #require(await results.next())
            #expect(throws: SyncError.accountErased) { try last.get() }
            #expect(await results.next() == nil, "AutoSync stops")
            #expect(try await world.count("habits") == 0, "the offline edit was not stored")
        }
    }

    /// A device following the event stream learns of the erasure without a trigger of its own:
    /// the erasure tells the user's streams, the device pulls, gets the error and stops.
    /// (Without the erasure's notice nothing would ever wake the device: the limit turns that
    /// into a failure instead of a hang; a passing run takes seconds, a loaded machine's
    /// minutes.)
    @Test(.timeLimit(.minutes(10)))
    func aStreamingDeviceStopsWhenTheAccountIsDeletedElsewhere() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            try await RealtimeKit.waitUntilListening(server)
            let (phone, watch) = try await Self.phoneAndWatch(world, server)
            _ = try phone.store.save(Habit(name: "Stretch", startDate: Self.day))
            _ = try await phone.sync()
            _ = try await watch.sync()
            // The watch's stream is open once the server has counted it.
            let autoSync = AutoSync(engine: watch, debounce: .zero, interval: .seconds(86_400), realtime: true)
            var results = autoSync.start().makeAsyncIterator()
            // Until it is (however busy the machine): erased before it opens, nothing would tell it.
            while try await !server.get("/metrics").text.contains("habitsync_realtime_streams_open 1") {
                try await Task.sleep(for: .milliseconds(10))
            }
            try await phone.deleteAccount()
            // Syncs its stream's opening set off may still report first; the erasure's comes next.
            var last = try #require(await results.next())
            for _ in 0..<10 {
                if case .failure = last { break }
                last = try #require(await results.next())
            }
            #expect(throws: SyncError.accountErased) { try last.get() }
            #expect(await results.next() == nil, "AutoSync stops")
        }
    }

    /// The README's walk-through: phone and watch both show 1; offline, each records one more;
    /// after both sync, both show 3 and nobody was told of a conflict.
    @Test func twoOfflineCompletionsOnPhoneAndWatchMakeThree() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let (phone, watch) = try await Self.phoneAndWatch(world, server)
            let today = LocalDate(Date(), in: TimeZone(identifier: "UTC") ?? .current)
            let habit = try phone.store.save(
                Habit(
                    name: "Read", habitType: .formation, goalCount: 1, goalUnit: "times",
                    schedule: .daily, startDate: today.adding(days: -1)))
            try phone.store.addProgress(habitId: habit.id, date: today, goalCount: 1)
            #expect(try await phone.sync().pushed.applied == 2)
            _ = try await watch.sync()
            #expect(try watch.store.progress(habitId: habit.id, date: today)?.value.progressCount == 1)

            try phone.store.addProgress(habitId: habit.id, date: today, goalCount: 1)
            try watch.store.addProgress(habitId: habit.id, date: today, goalCount: 1)
            let watchSync = try await watch.sync()
            let phoneSync = try await phone.sync()
            _ = try await watch.sync()
            #expect(watchSync.pushed.conflicts.isEmpty && phoneSync.pushed.conflicts.isEmpty)
            for device in [phone, watch] {
                #expect(try device.store.progress(habitId: habit.id, date: today)?.value.progressCount == 3)
                #expect(try device.store.pendingCount() == 0)
            }
            #expect(try await world.count("daily_progress", where: "progress_count = 3") == 1)
        }
    }

    @Test func aRenameOnThePhoneAndAGoalOnTheWatchBothSurvive() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let (phone, watch) = try await Self.phoneAndWatch(world, server)
            let today = LocalDate(Date(), in: TimeZone(identifier: "UTC") ?? .current)
            let habit = try phone.store.save(
                Habit(
                    name: "Read", habitType: .formation, goalCount: 10, goalUnit: "pages",
                    schedule: .daily, startDate: today))
            _ = try await phone.sync()
            _ = try await watch.sync()
            // Both offline: the phone renames, the watch raises the goal; the watch syncs first.
            var renamed = try #require(try phone.store.fetch(Habit.self, id: habit.id)).value
            renamed.name = "Read books"
            try phone.store.save(renamed, id: habit.id)
            var raised = try #require(try watch.store.fetch(Habit.self, id: habit.id)).value
            raised.goalCount = 30
            try watch.store.save(raised, id: habit.id)
            let watchSync = try await watch.sync()
            let phoneSync = try await phone.sync()
            _ = try await watch.sync()
            #expect(watchSync.pushed.conflicts.isEmpty && phoneSync.pushed.conflicts.isEmpty)
            for device in [phone, watch] {
                let merged = try #require(try device.store.fetch(Habit.self, id: habit.id)).value
                #expect(merged.name == "Read books")
                #expect(merged.goalCount == 30)
                #expect(try device.store.pendingCount() == 0)
            }
            #expect(try await world.count("conflict_log") == 0)
        }
    }
}
