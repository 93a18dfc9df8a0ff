import Foundation
import HabitSyncClient
import HabitSyncDomain
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// habitsync-device: a device in a terminal, on the SDK. Two terminals with two store files are
// two phones of one user.

let usageText = """
    usage: habitsync-device [--store FILE] [--device NAME] [--server URL] [--token TOKEN] [--history-days N] COMMAND …

      add-habit NAME            a daily habit starting today; prints its id
      complete HABIT_ID         one more completion of the habit today
      rename HABIT_ID NAME      a new name for the habit
      set-goal HABIT_ID GOAL    a new daily goal for the habit
      list                      habits and today's progress, with their sync status
      sync                      push the outbox, pull to the end; prints each phase of a first sync
                                as it is reached, conflicts and rejections
      failed                    records the server rejected, with code and field

    --device names this device (default terminal) and its store file (NAME.sqlite in the current
    folder, unless --store). --server, --token and --timeout (seconds to wait for each answer)
    default to $HABITSYNC_SERVER (http://127.0.0.1:8080), $HABITSYNC_TOKEN and
    $HABITSYNC_TIMEOUT (60). --history-days keeps that many days of dated history (a watch: 90);
    without it the store keeps everything. --help prints this, --version the release.
    """

struct Usage: Error, CustomStringConvertible {
    let description: String
}

func run() async throws {
    var arguments = Array(CommandLine.arguments.dropFirst())
    var options: [String: String] = [:]
    while let first = arguments.first, first.hasPrefix("-") {
        switch first {
        case "--help", "-h":
            print(usageText)
            return
        case "--version":
            print(Release.version)
            return
        case "--store", "--device", "--server", "--token", "--timeout", "--history-days":
            break
        default:
            throw Usage(description: "unknown option \(first) (--help lists them)")
        }
        guard arguments.count >= 2 else { throw Usage(description: "\(first) needs a value") }
        options[String(first.dropFirst(2))] = arguments[1]
        arguments.removeFirst(2)
    }
    let environment = ProcessInfo.processInfo.environment
    let device = options["device"] ?? "terminal"
    let store = try LocalStore(path: options["store"] ?? "\(device).sqlite", deviceID: device)
    guard let command = arguments.first else { throw Usage(description: "no command (add-habit, complete, rename, set-goal, list, sync, failed)") }
    let today = LocalDate(Date(), in: .current)

    switch command {
    case "add-habit":
        guard arguments.count == 2 else { throw Usage(description: "add-habit NAME") }
        let habit = try store.save(Habit(name: arguments[1], startDate: today))
        print(habit.id.uuidString.lowercased())
    case "complete":
        guard arguments.count == 2, let habitID = UUID(uuidString: arguments[1]) else { throw Usage(description: "complete HABIT_ID") }
        guard let habit = try store.fetch(Habit.self, id: habitID) else { throw Usage(description: "no habit \(arguments[1]) on this device") }
        let progress = try store.addProgress(habitId: habitID, date: today, goalCount: habit.value.goalCount)
        print("progress \(progress.id.uuidString.lowercased()): \(progress.value.progressCount) on \(today)")
    case "rename", "set-goal":
        guard arguments.count == 3, let habitID = UUID(uuidString: arguments[1]) else { throw Usage(description: "\(command) HABIT_ID \(command == "rename" ? "NAME" : "GOAL")") }
        guard var habit = try store.fetch(Habit.self, id: habitID)?.value else { throw Usage(description: "no habit \(arguments[1]) on this device") }
        if command == "rename" {
            habit.name = arguments[2]
        } else {
            guard let goal = Int(arguments[2]) else { throw Usage(description: "set-goal HABIT_ID GOAL (a whole number)") }
            habit.goalCount = goal
        }
        let saved = try store.save(habit, id: habitID)
        print("\(saved.id.uuidString.lowercased())  \(saved.value.name)  goal \(saved.value.goalCount)  [\(saved.syncStatus.rawValue)]")
    case "list":
        for habit in try store.fetchAll(Habit.self) {
            let count = try store.progress(habitId: habit.id, date: today)?.value.progressCount ?? 0
            print("\(habit.id.uuidString.lowercased())  \(habit.value.name)  today \(count)  goal \(habit.value.goalCount)  [\(habit.syncStatus.rawValue)]")
        }
        if let streak = try store.derived(GlobalStreak.self), let progress = try store.derived(UserProgress.self) {
            print("streak \(streak.currentStreak) day(s), level \(progress.currentLevel), \(progress.totalXP) XP")
        }
    case "sync":
        guard let server = URL(string: (options["server"] ?? environment["HABITSYNC_SERVER"] ?? "http://127.0.0.1:8080") + "/"),
            let token = options["token"] ?? environment["HABITSYNC_TOKEN"]
        else { throw Usage(description: "sync needs --token (or HABITSYNC_TOKEN) and a server URL") }
        let timeout = options["timeout"] ?? environment["HABITSYNC_TIMEOUT"] ?? "60"
        guard let seconds = TimeInterval(timeout), seconds.isFinite, seconds >= 1, seconds <= 86_400
        else { throw Usage(description: "--timeout (or HABITSYNC_TIMEOUT) is seconds to wait for each answer, 1 to 86400; got \(timeout)") }
        let configuration = URLSessionTransport.uncachedConfiguration()
        configuration.timeoutIntervalForRequest = seconds
        let transport = URLSessionTransport(session: URLSession(configuration: configuration))
        var engine = SyncEngine(store: store, baseURL: server, transport: transport) { token }
        if let text = options["history-days"] {
            guard let days = Int(text), (1...36_500).contains(days) else { throw Usage(description: "--history-days is a whole number of days, 1 to 36500; got \(text)") }
            engine.historyDays = days
        }
        // One line each time the pull reaches a new phase, not one per page.
        let lastPhase = Mutex<PullProgress.Phase?>(try store.syncPhase())
        engine.onProgress = { progress in
            guard
                lastPhase.withLock({ last in
                    defer { last = progress.phase }; return last != progress.phase
                })
            else { return }
            switch progress.phase {
            case .recent: print("first sync: the main screen's records are coming (about \(progress.remaining) after \(progress.pulled))")
            case .history: print("first sync: the main screen is ready after \(progress.pulled) change(s); about \(progress.remaining) older one(s) to come")
            case .complete: print("first sync: complete after \(progress.pulled) change(s)")
            }
        }
        let report = try await engine.sync()
        print("pushed \(report.batches) batch(es): \(report.pushed.applied) applied, \(report.pushed.unchanged) unchanged; pulled \(report.pulled)")
        for conflict in report.pushed.conflicts {
            print("conflict: \(conflict.collection.rawValue) \(conflict.id.uuidString.lowercased()) kept \(conflict.winnerUpdatedBy)'s write of \(WireTime.format(conflict.winnerUpdatedAt))")
        }
        for rejection in report.pushed.rejected {
            print("rejected: \(rejection.collection.rawValue) \(rejection.id.uuidString.lowercased()): \(rejection.failure.code) \(rejection.failure.field ?? "") \(rejection.failure.message)")
        }
    case "failed":
        for collection in SyncCollection.allCases where collection.kind != .derived {
            for record in try store.records(collection, includingDeleted: true) where record.syncStatus == .failed {
                print("\(collection.rawValue) \(record.id.uuidString.lowercased()): \(record.failure?.code ?? "") \(record.failure?.field ?? "") \(record.failure?.message ?? "")")
            }
        }
    default:
        throw Usage(description: "unknown command \(command) (add-habit, complete, rename, set-goal, list, sync, failed)")
    }
}

do {
    try await run()
} catch let usage as Usage {
    FileHandle.standardError.write(Data("habitsync-device: \(usage)\n".utf8))
    exit(2)
} catch let rejection as ChangeRejection {
    FileHandle.standardError.write(Data("habitsync-device: rejected: \(rejection.code.rawValue) \(rejection.field ?? "") \(rejection.message)\n".utf8))
    exit(1)
} catch let failure as URLError {
    // Not URLSession's `Error Domain=NSURLErrorDomain Code=-1004 …`: what happened, and where.
    let server = failure.failingURL.flatMap { URL(string: "/", relativeTo: $0)?.absoluteString } ?? "the server"
    let what: String
    switch failure.code {
    case .cannotConnectToHost: what = "nothing answers at \(server) (is the server running? scripts/run starts it)"
    case .cannotFindHost: what = "no such host: \(server)"
    case .timedOut: what = "\(server) did not answer in time"
    case .networkConnectionLost: what = "the connection to \(server) dropped; sync again"
    default: what = "could not reach \(server): \(failure.localizedDescription)"
    }
    FileHandle.standardError.write(Data("habitsync-device: \(what)\n".utf8))
    exit(1)
} catch {
    FileHandle.standardError.write(Data("habitsync-device: \(error)\n".utf8))
    exit(1)
}
