import Foundation
import ServerHarness
import TestSupport
import Testing

/// `habitsync-faults` interrupted mid-run (SIGINT, as Ctrl-C sends it) stops the servers and
/// the PostgreSQL cluster it started instead of leaving them running, orphaned.
@Suite struct InterruptTests {
    static var faultsBinary: URL { HabitSyncBinary.url.deletingLastPathComponent().appendingPathComponent("habitsync-faults") }

    @Test func anInterruptedRunLeavesNoServerOrDatabaseRunning() async throws {
        let process = Process()
        process.executableURL = Self.faultsBinary
        process.arguments = [
            "--server-binary", HabitSyncBinary.url.path, "--migrations-dir", TestPostgres.migrationsDirectory.path,
            "--scenario", "replicas", "--hold-when-serving",
        ]
        let output = try makeTemporaryDirectory("habitsync-interrupt").appendingPathComponent("output.txt")
        defer { try? FileManager.default.removeItem(at: output.deletingLastPathComponent()) }
        #expect(FileManager.default.createFile(atPath: output.path, contents: nil))
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = process.standardOutput
        try process.run()
        let runner = process.processIdentifier

        // Wait until the run has its cluster up and both replicas serving, where it holds until
        // interrupted (`--hold-when-serving`): even the full form of the scenario once finished
        // between two looks, with the machine busy beside the suite.
        var folder: URL?
        var postmaster: Int32?
        var servers: [Int32] = []
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(300)
        while servers.count < 2 && process.isRunning && clock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            folder = try? FileManager.default.contentsOfDirectory(at: URL(fileURLWithPath: NSTemporaryDirectory()), includingPropertiesForKeys: nil)
                .first { $0.lastPathComponent.hasPrefix("habitsync-faults-\(runner)-replicas-") }
            guard let folder,
                let lines = (try? String(contentsOf: folder.appendingPathComponent("postgres/data/postmaster.pid"), encoding: .utf8))?.split(separator: "\n"),
                lines.count > 3, let pid = Int32(lines[0])
            else { continue }
            postmaster = pid
            servers = Self.processes { $0.contains("serve") && $0.contains("port=\(lines[3])") }
        }
        defer { if let folder { try? FileManager.default.removeItem(at: folder) } }
        let serverPIDs = servers
        let said = { String(((try? String(contentsOf: output, encoding: .utf8)) ?? "").suffix(1500)) }
        let databasePID = try #require(postmaster, "the run did not start its cluster (running: \(process.isRunning)); it said: \(said())")
        try #require(serverPIDs.count == 2, "the run did not start both replicas")

        kill(runner, SIGINT)
        let termination = await process.waitForTermination(timeout: deadline - clock.now)
        #expect(termination == ProcessTermination(status: 128 + SIGINT, bySignal: false))
        // A bound for the failure case only (it ends as soon as all are gone): a busy machine
        // (CI building beside it) once kept a killed server visible past 15 s.
        let settled = clock.now + .seconds(120)
        while (Self.isAlive(databasePID) || serverPIDs.contains(where: Self.isAlive)) && clock.now < settled {
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(!Self.isAlive(databasePID), "PostgreSQL (pid \(databasePID)) still runs")
        for pid in serverPIDs { #expect(!Self.isAlive(pid), "server pid \(pid) still runs") }
    }

    /// Running (not a zombie) processes whose command line matches.
    static func processes(where matches: (String) -> Bool) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { pid in
            guard isAlive(pid), let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            let commandLine = String(decoding: data.map { $0 == 0 ? 32 : $0 }, as: UTF8.self)
            return commandLine.contains("habitsync-server") && matches(commandLine)
        }
    }

    static func isAlive(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let afterName = stat.range(of: ") ")?.upperBound
        else { return false }
        return stat[afterName...].first != "Z"
    }
}
