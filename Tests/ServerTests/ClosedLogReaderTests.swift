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
    /// `serve` with `arguments`, its output and errors into a new pipe; returns the process
    /// and the pipe's read end (the write end is closed here: the server holds it).
    static func serveIntoPipe(_ arguments: [String], environment: [String: String]? = nil, in folder: URL? = nil) throws -> (Process, readEnd: Int32) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw HarnessError("pipe() failed: errno \(errno)") }
        let process = Process()
        process.executableURL = HabitSyncBinary.url
        process.arguments = ["serve"] + arguments + ["--migrations-dir", TestPostgres.migrationsDirectory.path, "--drain-timeout", "10s"]
        if let environment { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        if let folder { process.currentDirectoryURL = folder }
        let writer = FileHandle(fileDescriptor: ends[1], closeOnDealloc: false)
        process.standardOutput = writer
        process.standardError = writer
        process.standardInput = FileHandle.nullDevice
        defer { close(ends[1]) }
        try process.run()
        return (process, ends[0])
    }

    @Test func aLogReaderThatGoesAwayCostsLinesNotTheProcess() async throws {
        let database = try await TestPostgres.shared.migratedDatabase()
        let port = try freeLoopbackPort()
        let (process, readEnd) = try Self.serveIntoPipe(["--database-url", database.connectionString, "--port", String(port), "--migrate", "off"])
        // Nobody reads: the read end closed too, so the server's first line meets a closed pipe.
        close(readEnd)

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
        let test = try EmbeddedTestFolder("habitsync-ctrl-c")
        defer { test.cleanUp() }
        let port = try freeLoopbackPort()
        let (process, readEnd) = try Self.serveIntoPipe(["--port", String(port), "--data-dir", ".habitsync"], environment: ["DATABASE_URL": ""], in: test.folder)

        let ready = try await TestHTTP.awaitReady("http://127.0.0.1:\(port)") { process.isRunning }
        #expect(ready == 200, "the server never became ready")
        #expect(test.clusterIsRunning, "serve started the embedded database")
        // The reader (`tee`) goes first, then the server gets the same SIGINT.
        close(readEnd)
        kill(process.processIdentifier, SIGINT)
        let termination = await process.exited()
        #expect(termination.status == 0 && !termination.bySignal, "exit \(termination.status), by signal: \(termination.bySignal)")
        #expect(!test.clusterIsRunning, "the embedded database it started was stopped")
    }
}
