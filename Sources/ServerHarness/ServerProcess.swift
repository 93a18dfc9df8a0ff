import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One `habitsync-server serve` child process, run as ops run it: started, found on the port
/// it reports, signalled, and waited for. A restart keeps the port, so clients (and a load
/// balancer) find it again.
public final class ServerProcess {
    public let binary: URL
    /// Nil: no DATABASE_URL at all, so the server runs its embedded database (under
    /// `workingDirectory`).
    public let databaseURL: String?
    public let workingDirectory: URL?
    public let name: String
    public private(set) var port: Int
    public private(set) var logFile: URL
    private let logDirectory: URL
    private let extraArguments: [String]
    /// A command the binary runs under, e.g. a shell that lowers its limits first; empty: none.
    private let launcher: [String]
    private var process: SpawnedChild?
    private var starts = 0
    private var cleanup: UUID?
    /// How the process last ended, once `waitForExit` saw it end.
    private var lastTermination: ProcessTermination?

    /// `extraArguments` are added to `serve --port … --database-url … --log-format json`.
    public init(
        binary: URL, databaseURL: String?, logDirectory: URL, name: String = "server", port: Int = 0,
        workingDirectory: URL? = nil, extraArguments: [String] = [], launcher: [String] = []
    ) {
        self.launcher = launcher
        self.binary = binary
        self.databaseURL = databaseURL
        self.workingDirectory = workingDirectory
        self.logDirectory = logDirectory
        self.name = name
        self.port = port
        self.extraArguments = extraArguments
        logFile = logDirectory.appendingPathComponent("\(name).log")
    }

    public var baseURL: String { "http://127.0.0.1:\(port)" }
    public var processIdentifier: Int32 { process?.pid ?? 0 }
    public var isRunning: Bool { lastTermination == nil && (process?.isRunning ?? false) }

    /// Starts the process and waits until it logs that it serves (at most `timeout`); the
    /// "serving" line is logged at info, so the log level must not be above it. A process that
    /// exits is seen at once; the timeout only ends a hang (an embedded cluster's first start
    /// once took over a minute in the suite's busiest moment, against 3 s on a quiet machine).
    public func start(timeout: Duration = .seconds(300)) async throws {
        starts += 1
        logFile = logDirectory.appendingPathComponent("\(name)-\(starts).log")
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        let arguments = ["serve", "--port", String(port)] + (databaseURL.map { ["--database-url", $0] } ?? []) + ["--log-format", "json"] + extraArguments
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "DATABASE_URL")
        // Not Foundation's `Process`, whose `run()` crashes now and then (`SpawnedChild`).
        let process = try SpawnedChild.spawn(
            launcher.first.map { URL(fileURLWithPath: $0) } ?? binary,
            launcher.isEmpty ? arguments : Array(launcher.dropFirst()) + [binary.path] + arguments,
            environment: environment, directory: workingDirectory, output: .null, error: .file(logFile))
        self.process = process
        lastTermination = nil
        let pid = process.pid
        if let cleanup { HarnessCleanup.shared.unregister(cleanup) }
        cleanup = HarnessCleanup.shared.register { kill(pid, SIGKILL) }

        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while clock.now < deadline {
            if let served = servingPort() {
                port = served
                return
            }
            guard process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        process.send(SIGTERM)
        throw HarnessError("\(name) did not start serving; last lines of \(logFile.path):\n\(logTail())")
    }

    /// The port from this run's `"msg":"serving"` log line, once it is there.
    private func servingPort() -> Int? {
        guard let text = try? String(contentsOf: logFile, encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.contains("\"msg\":\"serving\"") {
            let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
            if let port = object?["port"].flatMap({ Int("\($0)") }) { return port }
        }
        return nil
    }

    public func logTail(lines: Int = 20) -> String {
        let text = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").suffix(lines).joined(separator: "\n")
    }

    /// Sends `signal` (SIGKILL, SIGTERM, …) to the process.
    public func send(_ signal: Int32) {
        guard let process, isRunning else { return }
        process.send(signal)
    }

    /// The exit status once the process has exited, or nil if it still runs after `timeout`.
    /// A process killed by a signal reports that signal's number.
    public func waitForExit(timeout: Duration) async -> Int32? {
        guard let process, let termination = await process.waitForTermination(timeout: timeout) else { return nil }
        if let cleanup { HarnessCleanup.shared.unregister(cleanup) }
        cleanup = nil
        lastTermination = termination
        return termination.status
    }

    /// Whether the last exit was a signal rather than `exit(…)`.
    public var wasKilledBySignal: Bool { lastTermination?.bySignal ?? false }

    /// The process's peak resident set size (`VmHWM`), in MiB; 0 when it is not running.
    public func peakRSSMiB() -> Double { statusMiB("VmHWM:") }

    /// The process's resident set size now (`VmRSS`), in MiB; 0 when it is not running.
    public func residentMiB() -> Double { statusMiB("VmRSS:") }

    /// A kilobyte field of `/proc/<pid>/status`, in MiB.
    private func statusMiB(_ field: String) -> Double {
        guard let process, process.isRunning,
            let status = try? String(contentsOfFile: "/proc/\(process.pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field) }),
            let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kilobytes / 1024
    }

    /// SIGTERM, then SIGKILL if it has not exited within `grace`.
    public func stop(grace: Duration = .seconds(30)) async {
        send(SIGTERM)
        if await waitForExit(timeout: grace) == nil {
            send(SIGKILL)
            _ = await waitForExit(timeout: .seconds(10))
        }
    }
}

public struct HarnessError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
