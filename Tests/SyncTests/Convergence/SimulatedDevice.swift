import Foundation
import HabitSyncClient
import HabitSyncDomain

/// One phone or watch of the convergence suite: its own SQLite file, its own skewed clock,
/// random edits of every collection, and syncs that the app may be killed in the middle of.
actor SimulatedDevice {
    let name: String
    let path: String
    let skew: TimeInterval
    let ledger = ConvergenceLedger()
    private let makeEngine: @Sendable (LocalStore) -> SyncEngine
    private(set) var engine: SyncEngine
    var store: LocalStore { engine.store }

    struct Counts: Sendable {
        var operations: [String: Int] = [:]
        var refusedLocally = 0
        var syncs = 0, failedSyncs = 0, restarts = 0, pullsStartedOver = 0
        /// Syncs whose digests found this device's copy different from the server's.
        var digestRepairs = 0
    }
    private(set) var counts = Counts()
    /// Whether a sync succeeded since the last `resetSyncedOnce()` (the final passes).
    private(set) var syncedOnce = false

    func resetSyncedOnce() { syncedOnce = false }

    init(name: String, directory: URL, skew: TimeInterval, transport: FaultInjectingTransport, token: String) throws {
        self.name = name
        path = directory.appendingPathComponent("\(name).sqlite").path
        self.skew = skew
        let ledger = ledger
        makeEngine = { store in
            var engine = SyncEngine(store: store, baseURL: URL(string: "http://device.invalid/")!, transport: transport) { token }
            engine.pageSize = 50  // several pages per pull
            engine.maximumChanges = 20  // several batches per push
            engine.onSettled = { ledger.settled($0) }
            return engine
        }
        engine = makeEngine(try Self.open(path: path, name: name, skew: skew))
    }

    private static func open(path: String, name: String, skew: TimeInterval) throws -> LocalStore {
        try LocalStore(path: path, deviceID: name, now: { Date().addingTimeInterval(skew) })
    }

    var now: Date { Date().addingTimeInterval(skew) }
    var today: LocalDate { LocalDate(dayNumber: Int((now.timeIntervalSince1970 / 86_400).rounded(.down))) }

    // MARK: - Syncing

    func sync() async {
        counts.syncs += 1
        do {
            let report = try await engine.sync()
            counts.pullsStartedOver += report.pullsStartedOver
            if report.pullsStartedOver > 0 { ledger.note("pull started over (410), pulled \(report.pulled)") }
            noteTimeline(report)
            syncedOnce = true
        } catch {
            counts.failedSyncs += 1
            noteIfWithoutCursor()
        }
    }

    private func noteTimeline(_ report: SyncEngine.Report) {
        for event in report.timelineEvents {
            if case .repaired = event { counts.digestRepairs += 1 }
            ledger.note("timeline: \(event)")
        }
    }

    /// The last word of the final passes: one more sync, whose digests must find nothing to
    /// repair. Returns what it found.
    func finalDigestCheck() async throws -> [TimelineEvent] {
        try await engine.sync().timelineEvents
    }

    /// A sync that failed between a dropped cursor (or before the first page) and the end of
    /// the pull leaves the device to pull from scratch next time: worth a line in a failure.
    private func noteIfWithoutCursor() {
        if (try? store.pullCursor()) == nil { ledger.note("sync ended without a pull cursor") }
    }

    /// The app is killed somewhere in a sync (the task is cancelled after a random moment),
    /// then starts again: the store is closed and opened again from its file.
    func syncAndRestart() async throws {
        counts.syncs += 1
        counts.restarts += 1
        let engine = engine
        let task = Task { try await engine.sync() }
        try await Task.sleep(for: .milliseconds(Int.random(in: 0...15)))
        task.cancel()
        let result = await task.result
        if case .success(let report) = result, report.pullsStartedOver > 0 { ledger.note("pull started over (410) before the kill") }
        if case .success(let report) = result { noteTimeline(report) }
        ledger.note("app killed mid-sync (\((try? result.get()) == nil ? "sync unfinished" : "sync had finished")), restarted")
        self.engine = makeEngine(try Self.open(path: path, name: name, skew: skew))
        noteIfWithoutCursor()
    }

    // MARK: - Edits

    func act(_ count: Int) {
        for _ in 0..<count { actOnce() }
    }

    private func actOnce() {
        let operations: [(String, Int, () throws -> (SyncCollection, UUID)?)] = [
            ("create habit", 6, createHabit), ("edit habit", 5, editHabit), ("delete habit", 1, deleteHabit),
            ("reminder", 4, editReminder), ("progress", 12, addProgress), ("set progress", 1, setProgress), ("skip", 2, skipDay), ("delete progress", 1, deleteProgress),
            ("xp", 4, addXP), ("achievement", 2, unlockAchievement), ("focus", 6, moveFocusSession),
            ("usage event", 6, addUsageEvent), ("selected app", 3, editSelectedApp), ("settings", 2, editSettings),
        ]
        var roll = Int.random(in: 0..<operations.map(\.1).reduce(0, +))
        guard
            let operation = operations.first(where: {
                roll -= $0.1; return roll < 0
            })
        else { return }
        do {
            guard let (collection, id) = try operation.2() else { return }
            // Saving what the record holds already is no edit (nothing is sent, nothing answered).
            guard try store.record(collection, id: id)?.syncStatus == .pending else { return }
            counts.operations[operation.0, default: 0] += 1
            ledger.edited(collection, id, operation: operation.0)
        } catch is ChangeRejection {
            counts.refusedLocally += 1
        } catch {
            counts.refusedLocally += 1
        }
    }

    private func randomLive<Model: SyncModel>(_ type: Model.Type) throws -> Stored<Model>? {
        try store.fetchAll(type).filter { $0.syncStatus != .failed }.randomElement()
    }

    private func createHabit() throws -> (SyncCollection, UUID)? {
        let schedules: [HabitSchedule] = [.daily, .daily, .everyNDays(2), .specificWeekdays([.monday, .wednesday, .friday]), .frequencyWeekly(3)]
        let habit = Habit(
            name: "Habit \(Int.random(in: 1...999))", goalCount: Int.random(in: 1...3), schedule: schedules.randomElement()!,
            startDate: LocalDate(dayNumber: today.dayNumber - 30))
        return (.habits, try store.save(habit).id)
    }

    private func editHabit() throws -> (SyncCollection, UUID)? {
        // Half the edits go to the user's two first habits (by id), which every device holds:
        // so devices offline at once edit one habit, and one field of it, often.
        let shared = try store.fetchAll(Habit.self).filter { $0.syncStatus != .failed }.sorted { $0.id.uuidString < $1.id.uuidString }.prefix(2)
        guard var habit = Bool.random() ? shared.randomElement() : try randomLive(Habit.self) else { return try createHabit() }
        // One field, or two: devices editing the same habit offline touch disjoint fields as
        // often as the same one (FieldCheck).
        var value = habit.value
        switch Int.random(in: 0..<4) {
        case 0: value.name = "Habit \(Int.random(in: 1...999)) by \(name)"
        case 1: value.goalCount = Int.random(in: 1...3)
        case 2: value.icon = ["📚", "🏃", "💧", "🧘"].randomElement()! + name
        default:
            value.name = "Habit \(Int.random(in: 1...999)) by \(name)"
            value.goalCount = Int.random(in: 1...3)
        }
        habit = try store.save(value, id: habit.id)
        return (.habits, habit.id)
    }

    private func deleteHabit() throws -> (SyncCollection, UUID)? {
        guard let habit = try randomLive(Habit.self) else { return nil }
        try store.delete(Habit.self, id: habit.id)
        return (.habits, habit.id)
    }

    private func editReminder() throws -> (SyncCollection, UUID)? {
        if Bool.random(), let reminder = try randomLive(Reminder.self) {
            if Int.random(in: 0..<4) == 0 {
                try store.delete(Reminder.self, id: reminder.id)
                return (.reminders, reminder.id)
            }
            var value = reminder.value
            value.isActive.toggle()
            return (.reminders, try store.save(value, id: reminder.id).id)
        }
        guard let habit = try randomLive(Habit.self) else { return nil }
        let time = String(format: "%02d:%02d", Int.random(in: 0...23), Int.random(in: 0...59))
        return (.reminders, try store.save(Reminder(habitId: habit.id, time: time)).id)
    }

    private func randomDay() -> LocalDate { LocalDate(dayNumber: today.dayNumber - Int.random(in: 0...3)) }

    private func addProgress() throws -> (SyncCollection, UUID)? {
        guard let habit = try randomLive(Habit.self) else { return nil }
        let amount = Int.random(in: 0..<5) == 0 ? -1 : 1
        return (.dailyProgress, try store.addProgress(habitId: habit.id, date: randomDay(), amount: amount, goalCount: habit.value.goalCount).id)
    }

    private func setProgress() throws -> (SyncCollection, UUID)? {
        guard let habit = try randomLive(Habit.self) else { return nil }
        return (.dailyProgress, try store.setProgress(habitId: habit.id, date: randomDay(), count: Int.random(in: 0...4), goalCount: habit.value.goalCount).id)
    }

    private func skipDay() throws -> (SyncCollection, UUID)? {
        guard let habit = try randomLive(Habit.self) else { return nil }
        let day = randomDay()
        var value = try store.progress(habitId: habit.id, date: day)
        var progress = value?.value ?? DailyProgress(habitId: habit.id, date: day, progressCount: 0, goalCount: habit.value.goalCount)
        progress.skipReason = [.rest, .travel, .weather].randomElement()
        value = try store.save(progress, id: value?.id ?? UUID())
        return (.dailyProgress, value!.id)
    }

    private func deleteProgress() throws -> (SyncCollection, UUID)? {
        guard let progress = try randomLive(DailyProgress.self) else { return nil }
        try store.delete(DailyProgress.self, id: progress.id)
        return (.dailyProgress, progress.id)
    }

    private func addXP() throws -> (SyncCollection, UUID)? {
        var amount = Int.random(in: -50...150)
        if amount == 0 { amount = 10 }
        let transaction = XPTransaction(amount: amount, reason: "sim", timestamp: now.addingTimeInterval(-Double.random(in: 0...60)))
        return (.xpTransactions, try store.save(transaction).id)
    }

    private func unlockAchievement() throws -> (SyncCollection, UUID)? {
        // A handful of ids, so devices unlock the same ones offline (the earliest wins).
        let achievement = Achievement(
            achievementId: "achievement-\(Int.random(in: 1...6))", title: "Unlocked",
            unlockedAt: now.addingTimeInterval(-Double.random(in: 0...3600)), xpAwarded: 10)
        return (.achievements, try store.save(achievement).id)
    }

    private func moveFocusSession() throws -> (SyncCollection, UUID)? {
        let running = try store.fetchAll(FocusSession.self).filter { $0.value.state == .active || $0.value.state == .paused }
        if let session = running.randomElement(), Int.random(in: 0..<4) != 0 {
            var value = session.value
            switch Int.random(in: 0..<4) {
            case 0: value.state = value.state == .active ? .paused : .active
            case 1: value.state = .completed; value.endTime = max(now, value.startTime)
            default: value.state = .abandoned; value.endTime = max(now, value.startTime)
            }
            return (.focusSessions, try store.save(value, id: session.id).id)
        }
        if Int.random(in: 0..<8) == 0, let finished = try randomLive(FocusSession.self), finished.value.state == .completed {
            // Reopening a finished session: the server refuses it if it wins (invalid_transition).
            var value = finished.value
            value.state = .active
            value.endTime = nil
            return (.focusSessions, try store.save(value, id: finished.id).id)
        }
        let session = FocusSession(startTime: now.addingTimeInterval(-Double.random(in: 0...120)), duration: Double(Int.random(in: 60...1500)))
        return (.focusSessions, try store.save(session).id)
    }

    private func addUsageEvent() throws -> (SyncCollection, UUID)? {
        let kind = [UsageEvent.Kind.exitToFocus, .deepenPause, .proceedToApp].randomElement()!
        let timer = Double(Int.random(in: 15...45))
        let event = UsageEvent(
            eventType: kind, timestamp: now.addingTimeInterval(-Double.random(in: 0...600)),
            targetAppName: kind == .proceedToApp ? "Instagram" : nil, pauseDuration: Double.random(in: 0...timer), timerDuration: timer)
        return (.usageEvents, try store.save(event).id)
    }

    private func editSelectedApp() throws -> (SyncCollection, UUID)? {
        if let app = try randomLive(SelectedApp.self), Bool.random() {
            if Int.random(in: 0..<3) == 0 {
                try store.delete(SelectedApp.self, id: app.id)
                return (.selectedApps, app.id)
            }
            var value = app.value
            value.orderIndex = Int.random(in: 0...20)
            return (.selectedApps, try store.save(value, id: app.id).id)
        }
        let app = SelectedApp(
            appName: ["Instagram", "TikTok", "YouTube"].randomElement()!, iconName: "icon", urlScheme: "app\(Int.random(in: 1...9))://",
            dateAdded: now, orderIndex: Int.random(in: 0...20))
        return (.selectedApps, try store.save(app).id)
    }

    private func editSettings() throws -> (SyncCollection, UUID)? {
        var settings = try store.settings()?.value ?? UserSettings()
        if Bool.random() { settings.timezone = ["UTC", "Europe/Berlin", "America/New_York", "Asia/Tokyo"].randomElement()! }
        if Bool.random() { settings.gatewayTimerDuration = Int.random(in: 15...45) }
        return (.userSettings, try store.saveSettings(settings).id)
    }
}
