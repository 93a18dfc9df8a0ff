import Foundation
import HabitSyncClient
import HabitSyncDomain
import Testing

/// The typed models: every writable one saves, validates and reads back as it went in;
/// derived ones are read-only; progress is found by habit and day; a pull that starts over
/// drops what the server no longer has.
@Suite struct ModelTests {
    static let clock = ManualClock()
    static var now: Date { clock.now }
    static let day = LocalDate(year: 2026, month: 11, day: 17)!

    func roundTrip<Model: WritableModel>(_ store: LocalStore, _ value: Model) throws {
        let saved = try store.save(value)
        #expect(saved.value == value)
        #expect(saved.syncStatus == .pending)
        let fetched = try #require(try store.fetch(Model.self, id: saved.id))
        #expect(fetched.value == value, "\(Model.self) read back differently")
    }

    @Test func everyWritableModelReadsBackAsSaved() throws {
        let store = try LocalStoreTests.store(Self.clock)
        let habit = Habit(
            name: "Quit sugar", habitDescription: "two lines\nhere", color: "#FFAA00", habitType: .breaking, goalCount: 2,
            goalUnit: "snacks", schedule: .specificWeekdays([.monday, .friday]), baselineCount: 5, startDate: Self.day,
            endDate: LocalDate(year: 2027, month: 1, day: 1), createdAt: Self.now.addingTimeInterval(-60))
        let habitID = try store.save(habit).id
        try roundTrip(store, Habit(name: "Read", schedule: .everyNDays(3), startDate: Self.day))
        try roundTrip(store, Reminder(habitId: habitID, time: "07:30", notificationIdentifier: "n-1"))
        try roundTrip(
            store,
            DailyProgress(
                habitId: habitID, date: Self.day, progressCount: 3, goalCount: 2,
                timestamps: [Self.now.addingTimeInterval(-5)], difficulty: 4, skipReason: .travel, skipNote: "train"))
        try roundTrip(store, XPTransaction(amount: -20, reason: "undo", timestamp: Self.now, date: Self.day))
        try roundTrip(store, Achievement(achievementId: "first-week", title: "First week", unlockedAt: Self.now, xpAwarded: 100))
        try roundTrip(store, FocusSession(startTime: Self.now.addingTimeInterval(-600), endTime: Self.now, state: .completed, duration: 600, pausedDuration: 12.5))
        try roundTrip(store, UsageEvent(eventType: .proceedToApp, timestamp: Self.now, targetAppName: "Instagram", pauseDuration: 5, timerDuration: 30))
        try roundTrip(store, SelectedApp(appName: "Instagram", iconName: "camera", urlScheme: "instagram://", dateAdded: Self.now, orderIndex: 0))
        try roundTrip(store, UserSettings(timezone: "Europe/Berlin", gatewayTimerDuration: 20, frePhase: .phase1Complete))
        #expect(try store.pendingCount() == 10)
        // Timestamps keep milliseconds, as the server does.
        let withMilliseconds = Date(timeIntervalSince1970: 1_795_000_000.123)
        let event = try store.save(UsageEvent(eventType: .exitToFocus, timestamp: withMilliseconds, pauseDuration: 0, timerDuration: 30))
        #expect(event.value.timestamp == withMilliseconds)
    }

    @Test func typedSavesAreValidatedWithTheServersRules() throws {
        let store = try LocalStoreTests.store(Self.clock)
        func rejection(_ body: () throws -> Void) -> ChangeRejection? {
            do { try body() } catch let rejection as ChangeRejection { return rejection } catch {}
            return nil
        }
        #expect(rejection { try store.save(Habit(name: "  ", startDate: Self.day)) }?.field == "name")
        #expect(rejection { try store.save(Habit(name: "Run", habitType: .breaking, goalCount: 3, startDate: Self.day)) }?.field == "baselineCount")
        #expect(rejection { try store.save(Reminder(habitId: UUID(), time: "24:00")) }?.field == "time")
        #expect(rejection { try store.save(XPTransaction(amount: 0, reason: "zero", timestamp: Self.now)) }?.field == "amount")
        #expect(rejection { try store.save(UsageEvent(eventType: .exitToFocus, timestamp: Self.now.addingTimeInterval(3600), pauseDuration: 0, timerDuration: 30)) }?.code == .timestampInFuture)
        #expect(rejection { try store.save(FocusSession(startTime: Self.now, state: .completed, duration: 60)) }?.field == "endTime")
        #expect(rejection { try store.save(UserSettings(timezone: "Mars/Olympus")) }?.field == "timezone")
        #expect(try store.pendingCount() == 0)
    }

    @Test func derivedRecordsAreReadFromWhatThePullBrought() throws {
        let store = try LocalStoreTests.store(Self.clock)
        #expect(try store.derived(UserProgress.self) == nil)
        try store.storePulledPage(
            changes: [
                [
                    "collection": .string("userProgress"), "op": .string("upsert"), "id": .string(UUID().uuidString), "serverVersion": .number(7),
                    "updatedAt": .string("2026-11-17T07:00:00.000Z"), "updatedBy": .string("server"),
                    "record": .object(["totalXP": .number(1300), "currentLevel": .number(3), "xpForCurrentLevel": .number(100), "xpForNextLevel": .number(1500)]),
                ]
            ], cursor: "c1")
        let progress = try #require(try store.derived(UserProgress.self))
        #expect(progress.totalXP == 1300 && progress.currentLevel == 3 && progress.xpForCurrentLevel == 100 && progress.xpForNextLevel == 1500)
    }

    @Test func progressIsFoundByHabitAndDayAndIncrementsInPlace() throws {
        let store = try LocalStoreTests.store(Self.clock)
        let habit = try store.save(Habit(name: "Walk", goalCount: 3, startDate: Self.day)).id
        let first = try store.addProgress(habitId: habit, date: Self.day, goalCount: 3)
        let second = try store.addProgress(habitId: habit, date: Self.day, goalCount: 3)
        #expect(first.id == second.id && second.value.progressCount == 2)
        #expect(try store.progress(habitId: habit, date: LocalDate(year: 2026, month: 11, day: 18)!) == nil)
        // Another device's record of the same day, pulled before this one's is pushed: the
        // day shows the later write.
        let other = UUID()
        try store.storePulledPage(
            changes: [
                [
                    "collection": .string("dailyProgress"), "op": .string("upsert"), "id": .string(other.uuidString.lowercased()), "serverVersion": .number(3),
                    "updatedAt": .string(WireTime.format(Self.now.addingTimeInterval(60))), "updatedBy": .string("watch"),
                    "record": .object([
                        "habitId": .string(habit.uuidString.lowercased()), "date": .string("2026-11-17"), "progressCount": .number(5),
                        "goalCount": .number(3), "timestamps": .array([]), "difficulty": .null, "skipReason": .null, "skipNote": .null,
                    ]),
                ]
            ], cursor: "c1")
        #expect(try store.progress(habitId: habit, date: Self.day)?.id == other)
    }

    @Test func settingsKeepTheirOneRecord() throws {
        let store = try LocalStoreTests.store(Self.clock)
        let first = try store.saveSettings(UserSettings(timezone: "UTC"))
        let second = try store.saveSettings(UserSettings(timezone: "Asia/Tokyo"))
        #expect(first.id == second.id)
        #expect(try store.settings()?.value.timezone == "Asia/Tokyo")
        #expect(try store.fetchAll(UserSettings.self).count == 1)
    }

    @Test func aPullThatStartsOverDropsWhatTheServerNoLongerHas() throws {
        let store = try LocalStoreTests.store(Self.clock)
        func pulled(_ id: UUID, name: String) -> [String: JSONValue] {
            var record = LocalStoreTests.habit
            record["name"] = .string(name)
            return [
                "collection": .string("habits"), "op": .string("upsert"), "id": .string(id.uuidString), "serverVersion": .number(1),
                "updatedAt": .string("2026-11-17T07:00:00.000Z"), "updatedBy": .string("watch"), "record": .object(record),
            ]
        }
        let kept = UUID(), purged = UUID()
        try store.storePulledPage(changes: [pulled(kept, name: "Kept"), pulled(purged, name: "Purged")], cursor: "c1", isLast: true)
        let pending = try store.save(Habit(name: "Mine", startDate: Self.day)).id
        // 410: start over. The fresh pull brings `kept` only (`purged` was deleted and its
        // tombstone is gone); its first page alone drops nothing.
        try store.resetPullCursor()
        try store.storePulledPage(changes: [], cursor: "c2")
        #expect(try store.fetch(Habit.self, id: purged) != nil)
        try store.storePulledPage(changes: [pulled(kept, name: "Kept")], cursor: "c3", isLast: true)
        #expect(try store.fetch(Habit.self, id: purged) == nil)
        #expect(try store.fetch(Habit.self, id: kept)?.value.name == "Kept")
        #expect(try store.fetch(Habit.self, id: pending)?.syncStatus == .pending)
        // An ordinary last page afterwards drops nothing.
        try store.storePulledPage(changes: [], cursor: "c4", isLast: true)
        #expect(try store.fetch(Habit.self, id: kept) != nil)
    }

    @Test func aViewFollowsTypedModels() async throws {
        let store = try LocalStoreTests.store(Self.clock)
        var updates = store.observeAll(Habit.self).makeAsyncIterator()
        #expect(try await updates.next()?.isEmpty == true)
        let saved = try store.save(Habit(name: "Read", startDate: Self.day))
        #expect(try await updates.next()?.map(\.value.name) == ["Read"])
        try store.delete(Habit.self, id: saved.id)
        #expect(try await updates.next()?.isEmpty == true)
    }
}
