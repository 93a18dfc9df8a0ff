import EmbeddedPostgres
import Foundation
import ServerHarness
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `habitsync-server serve 2>&1 | head -c 2000`: the reader of the server's output goes away
/// (a log shipper restarting, `head`, Ctrl-C on `tee`). The server used to die at its next log
/// line: SIGPIPE (exit 141) before it was ready, a trap in `FileHandle.write` on EPIPE (exit 132)
/// after (issue 45, item 1). Now every request is answered, the lost lines are counted, and
/// SIGTERM ends it cleanly.
@Suite struct ClosedLogReaderTests {
    @Test func aLogReaderThatGoesAwayCostsLinesNotTheProcess() async throws {
        let database = try await TestPostgres.shared.migratedDatabase()
        let port = try freeLoopbackPort()
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let process = Process()
        process.executableURL = HabitSyncBinary.url
        process.arguments = [
            "serve", "--database-url", database.connectionString, "--port", String(port), "--migrate", "off", "--migrations-dir",
            TestPostgres.migrationsDirectory.path, "--drain-timeout", "10s",
        ]
        let writer = FileHandle(fileDescriptor: ends[1], closeOnDealloc: false)
        process.standardOutput = writer
        process.standardError = writer
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Nobody reads: both ends closed here, so the server's first line meets a closed pipe.
        close(ends[1])
        close(ends[0])

        let ready = try await TestHTTP.awaitReady("http://127.0.0.1:\(port)") { process.isRunning }
        #expect(ready == 200, "the server never became ready")
        // Each of these logs a line (401s and 404s too).
        var answered = 0
        for index in 0..<30 {
            let path = index % 3 == 0 ? "/livez" : index % 3 == 1 ? "/v1/sync/pull" : "/nowhere"
            if let reply = try? await TestHTTP.request("GET", "http://127.0.0.1:\(port)\(path)"), reply.status > 0 { answered += 1 }
        }
        #expect(answered == 30)
        let metrics = try await TestHTTP.request("GET", "http://127.0.0.1:\(port)/metrics")
        let dropped = metrics.text.split(separator: "\n").first { $0.hasPrefix("habitsync_log_lines_dropped_total ") }
        #expect(dropped.flatMap { Double($0.split(separator: " ").last ?? "") }.map { $0 >= 30 } == true, "\(String(describing: dropped))")

        kill(process.processIdentifier, SIGTERM)
        let termination = await process.exited()
        #expect(termination.status == 0 && !termination.bySignal, "exit \(termination.status), by signal: \(termination.bySignal)")
    }

    /// Ctrl-C in a terminal running `serve | tee log`: the terminal's SIGINT reaches both, `tee`
    /// ends, and the server, logging into the closed pipe as it drains, still stops cleanly and
    /// stops the embedded database it started (before, it died at its next line and left the
    /// database running).
    @Test func ctrlCThroughAClosedPipeStopsTheEmbeddedDatabase() async throws {
        let folder = try makeTemporaryDirectory("habitsync-ctrl-c")
        let cluster = folder.appendingPathComponent(".habitsync/postgres")
        defer {
            if EmbeddedPostgres.runningPort(ofCluster: cluster) != nil {
                try? EmbeddedPostgres(configuration: .init(directory: cluster), logger: TestPostgres.logger).stop(mode: .immediate)
            }
            try? FileManager.default.removeItem(at: folder)
        }
        let port = try freeLoopbackPort()
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let process = Process()
        process.executableURL = HabitSyncBinary.url
        process.arguments = [
            "serve", "--port", String(port), "--data-dir", ".habitsync", "--migrations-dir", TestPostgres.migrationsDirectory.path, "--drain-timeout", "10s",
        ]
        process.environment = ProcessInfo.processInfo.environment.merging(["DATABASE_URL": ""]) { $1 }
        process.currentDirectoryURL = folder
        let writer = FileHandle(fileDescriptor: ends[1], closeOnDealloc: false)
        process.standardOutput = writer
        process.standardError = writer
        process.standardInput = FileHandle.nullDevice
        try process.run()
        close(ends[1])

        let ready = try await TestHTTP.awaitReady("http://127.0.0.1:\(port)") { process.isRunning }
        #expect(ready == 200, "the server never became ready")
        #expect(EmbeddedPostgres.runningPort(ofCluster: cluster) != nil, "serve started the embedded database")
        // The reader (`tee`) goes first, then the server gets the same SIGINT.
        close(ends[0])
        kill(process.processIdentifier, SIGINT)
        let termination = await process.exited()
        #expect(termination.status == 0 && !termination.bySignal, "exit \(termination.status), by signal: \(termination.bySignal)")
        #expect(EmbeddedPostgres.runningPort(ofCluster: cluster) == nil, "the embedded database it started was stopped")
    }
}
