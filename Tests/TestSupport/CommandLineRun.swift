import Foundation
import ServerHarness

/// The built `habitsync-server` binary (beside the test bundle), run to completion.
public enum HabitSyncBinary {
    public static var url: URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("habitsync-server")
    }

    public struct Outcome: Sendable {
        public let status: Int32
        public let stdout: String
        public let stderr: String
    }

    public static func run(_ arguments: [String], environment extra: [String: String] = [:], in workingDirectory: URL? = nil) async throws -> Outcome {
        try await run(executable: url, arguments, environment: extra, in: workingDirectory)
    }

    /// Any program (`pg_dump`, …), run the same way (`SpawnedChild`, not Foundation's
    /// `Process`, whose `run()` crashes now and then in a process with many descriptors open).
    public static func run(executable: URL, _ arguments: [String], environment extra: [String: String] = [:], in workingDirectory: URL? = nil) async throws -> Outcome {
        var environment = ProcessInfo.processInfo.environment
        for (key, value) in extra { environment[key] = value }
        let directory = try makeTemporaryDirectory("habitsync-cli")
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("out"), err = directory.appendingPathComponent("err")
        let child = try SpawnedChild.spawn(
            executable, arguments, environment: environment, directory: workingDirectory, output: .file(out), error: .file(err))
        let termination = await child.exited()
        return Outcome(
            status: termination.status,
            stdout: (try? String(contentsOf: out, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOf: err, encoding: .utf8)) ?? "")
    }
}

extension Process {
    /// Waits for the process to exit without blocking a thread: the suite's tasks share two
    /// cooperative threads, and `waitUntilExit()` on them starved every other test while a
    /// child ran (a minute-long benchmark run held one for its whole length).
    /// (`waitForTermination` also reaps a child whose exit Foundation missed.)
    @discardableResult
    public func exited() async -> ProcessTermination {
        // Without a timeout it returns only once the child has ended.
        await waitForTermination() ?? ProcessTermination(status: -1, bySignal: false)
    }
}
