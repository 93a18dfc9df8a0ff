import EmbeddedPostgres
import Foundation
import ServerHarness
import TestSupport
import Testing

/// The real binary, as ops run it: no DATABASE_URL, so it creates and runs the embedded
/// database, serves, and on SIGTERM drains, stops the database, and exits 0.
@Suite struct ServerProcessTests {
    static var binary: URL { HabitSyncBinary.url }

    @Test func servesOnTheEmbeddedDatabaseAndExitsZeroOnSIGTERM() async throws {
        let workDirectory = try makeTemporaryDirectory("habitsync-serve")
        defer { try? FileManager.default.removeItem(at: workDirectory) }
        // A relative --data-dir is the folder the command runs in (the default, the checkout
        // the binary was built in, is this repository's own: not for tests).
        let embedded = ["DATABASE_URL": "", "HABITSYNC_DATA_DIR": ".habitsync"]
        let server = ServerProcess(
            binary: Self.binary, databaseURL: nil, logDirectory: workDirectory, workingDirectory: workDirectory,
            extraArguments: ["--migrations-dir", TestPostgres.migrationsDirectory.path, "--drain-timeout", "10s", "--data-dir", ".habitsync"])
        try await server.start()
        let boundPort = server.port

        // Ready soon after it serves; on a machine busy enough that the first database
        // connection is slow, /readyz may say 503 first, as a probe would see it (bounded by a
        // count of probes, not a deadline).
        var ready = try await TestHTTP.request("GET", "http://127.0.0.1:\(boundPort)/readyz")
        for _ in 0..<600 where ready.status != 200 {
            try await Task.sleep(for: .milliseconds(100))
            ready = try await TestHTTP.request("GET", "http://127.0.0.1:\(boundPort)/readyz")
        }
        #expect(ready.status == 200, "\(ready.text) \(server.logTail())")
        let metrics = try await TestHTTP.request("GET", "http://127.0.0.1:\(boundPort)/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.text.contains("habitsync_schema_version"))
        // Admin commands run meanwhile attach to the same embedded cluster.
        let created = try await HabitSyncBinary.run(["tenant", "create", "acme"], environment: embedded, in: workDirectory)
        #expect(created.status == 0, "\(created.stderr)")
        let tenant = created.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let minted = try await HabitSyncBinary.run(["token", "mint", "--tenant", "acme", "--user", "alice"], environment: embedded, in: workDirectory)
        let token = minted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let pull = try await TestHTTP.request("GET", "http://127.0.0.1:\(boundPort)/v1/sync/pull", headers: ["Authorization": "Bearer \(token)"])
        #expect(pull.status == 200)
        let pidFile = workDirectory.appendingPathComponent(".habitsync/postgres/data/postmaster.pid")
        #expect(FileManager.default.fileExists(atPath: pidFile.path), "the embedded cluster lives under ./.habitsync/postgres")
        // `embedded list` shows it running; `embedded remove` refuses a running one.
        let cluster = workDirectory.appendingPathComponent(".habitsync/postgres").path
        let listed = try await HabitSyncBinary.run(["embedded", "list"], environment: embedded, in: workDirectory)
        #expect(listed.status == 0 && listed.stdout.contains("\(cluster)  running on port") && listed.stdout.contains("for \(cluster)"), "\(listed.stdout) \(listed.stderr)")
        let refused = try await HabitSyncBinary.run(["embedded", "remove"], environment: embedded, in: workDirectory)
        #expect(refused.status == 1 && refused.stderr.contains("is running"), "\(refused.stderr)")

        server.send(SIGTERM)
        // Generous: the drain deadline is 10 s, and a busy machine only makes exiting slower.
        let status = await server.waitForExit(timeout: .seconds(120))
        #expect(status != nil, "still running 120 s after SIGTERM")
        #expect(status == 0 && !server.wasKilledBySignal)
        #expect(!FileManager.default.fileExists(atPath: pidFile.path), "the embedded database was stopped")
        let removed = try await HabitSyncBinary.run(["embedded", "remove"], environment: embedded, in: workDirectory)
        #expect(removed.status == 0 && !FileManager.default.fileExists(atPath: cluster), "\(removed.stderr)")
        let finalLog = try String(contentsOf: server.logFile, encoding: .utf8)
        #expect(finalLog.contains("\"msg\":\"stopped\""))
        // Logs carry the tenant and route of each request, and no secrets or tokens.
        #expect(finalLog.contains("\"tenant\":\"\(tenant)\""))
        #expect(finalLog.contains("\"route\":\"/v1/sync/pull\""))
        // One request id per line: ours (the caller's X-Request-Id when sane), not Hummingbird's too.
        #expect(finalLog.contains("\"request_id\":\"") && !finalLog.contains("hb.request.id"), "\(finalLog.suffix(1_000))")
        #expect(!finalLog.contains("password="))
        #expect(!finalLog.contains(token))
    }

    /// As root in a folder the `postgres` user cannot enter (root's home, `mktemp -d`): the
    /// embedded cluster moves to a system folder keyed by the path, and the server says where.
    @Test(.enabled(if: geteuid() == 0, "needs root"))
    func servesAsRootFromAFolderThePostgresUserCannotEnter() async throws {
        let closed = try makeTemporaryDirectory("habitsync-closed")
        defer { try? FileManager.default.removeItem(at: closed) }
        #expect(chmod(closed.path, 0o700) == 0)
        let checkout = closed.appendingPathComponent("checkout")
        try FileManager.default.createDirectory(at: checkout, withIntermediateDirectories: false)
        let relocated = EmbeddedPostgres.reachableDirectory(for: checkout.appendingPathComponent(".habitsync/postgres"))
        #expect(relocated.path.hasPrefix("/var/lib/habitsync/clusters/"))
        defer { try? FileManager.default.removeItem(at: relocated) }

        let server = ServerProcess(
            binary: Self.binary, databaseURL: nil, logDirectory: closed, workingDirectory: checkout,
            extraArguments: ["--migrations-dir", TestPostgres.migrationsDirectory.path, "--data-dir", ".habitsync"])
        try await server.start()
        #expect(try await TestHTTP.request("GET", "\(server.baseURL)/readyz").status == 200)
        #expect(FileManager.default.fileExists(atPath: relocated.appendingPathComponent("data/postmaster.pid").path))
        // A second command on the same checkout finds the same cluster.
        let embedded = ["DATABASE_URL": "", "HABITSYNC_DATA_DIR": ".habitsync"]
        let created = try await HabitSyncBinary.run(["tenant", "create", "acme"], environment: embedded, in: checkout)
        #expect(created.status == 0, "\(created.stderr)")
        // `embedded list` names the relocated cluster, the folder it serves and its password file.
        let listed = try await HabitSyncBinary.run(["embedded", "list"], environment: embedded, in: checkout)
        #expect(
            listed.stdout.contains("\(relocated.path)  running on port") && listed.stdout.contains("for \(checkout.path)/.habitsync/postgres")
                && listed.stdout.contains("password \(relocated.path)/superuser.password"), "\(listed.stdout) \(listed.stderr)")
        server.send(SIGTERM)
        #expect(await server.waitForExit(timeout: .seconds(120)) == 0)
        let log = try String(contentsOf: server.logFile, encoding: .utf8)
        #expect(log.contains(relocated.path), "the log names where the cluster lives")
        #expect(!FileManager.default.fileExists(atPath: relocated.appendingPathComponent("data/postmaster.pid").path), "stopped")
        // Removed by the folder `embedded list` printed, from anywhere.
        let removed = try await HabitSyncBinary.run(["embedded", "remove", relocated.path], environment: ["DATABASE_URL": ""], in: closed)
        #expect(removed.status == 0 && !FileManager.default.fileExists(atPath: relocated.path), "\(removed.stderr)")
    }

    @Test func aBadSettingStopsStartUpNamingItself() async throws {
        for (variable, value) in [("HABITSYNC_PORT", "eighty"), ("HABITSYNC_POOL_SIZE", "0"), ("HABITSYNC_MIGRATE", "sometimes"), ("HABITSYNC_STATEMENT_TIMEOUT", "-5s")] {
            let process = Process()
            process.executableURL = Self.binary
            process.arguments = ["serve"]
            var environment = ProcessInfo.processInfo.environment
            environment[variable] = value
            environment["DATABASE_URL"] = "host=127.0.0.1 port=1"
            process.environment = environment
            let errors = try CapturedOutput()
            process.standardError = errors.handle
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            let termination = await process.exited()
            let message = errors.text()
            #expect(termination.status != 0)
            #expect(message.contains(variable) && message.contains(value), "\(variable): \(message)")
        }
    }

    @Test func helpDocumentsEveryEnvironmentVariable() async throws {
        let process = Process()
        process.executableURL = Self.binary
        process.arguments = ["serve", "--help"]
        let output = try CapturedOutput()
        process.standardOutput = output.handle
        try process.run()
        await process.exited()
        let help = output.text()
        // Every variable of the README's configuration table (HABITSYNC_PG_BINDIR was left out
        // before: issue 45).
        let readme = try String(contentsOf: TestPostgres.migrationsDirectory.deletingLastPathComponent().appendingPathComponent("README.md"), encoding: .utf8)
        let variables = readme.split(separator: "\n").filter { $0.hasPrefix("| ") }.compactMap { row -> String? in
            let cells = row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 2, cells[1].hasPrefix("`HABITSYNC_") || cells[1] == "`DATABASE_URL`" else { return nil }
            return cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
        }
        #expect(variables.count >= 30 && variables.contains("HABITSYNC_PG_BINDIR"), "\(variables)")
        for variable in variables {
            #expect(help.contains(variable), "--help does not mention \(variable)")
        }
    }

    @Test func anAdminCommandOnAnUnmigratedDatabaseNamesMigrateUp() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        let run = try await HabitSyncBinary.run(["tenant", "create", "acme"], environment: ["DATABASE_URL": database.connectionString])
        #expect(run.status == 1)
        #expect(run.stderr.contains("migrate up"), "\(run.stderr)")
    }
}
