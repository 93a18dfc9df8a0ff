import Foundation
import ServerHarness
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// An installed server is the binary and nothing else (issue 45, item 3): copied alone into an
/// empty folder and run from there, it migrates an empty database, serves, answers
/// `GET /openapi.yaml` and the README's first sync. Before, the migrations were looked for
/// beside it (`cannot read the migrations folder …`) and `GET /openapi.yaml` trapped on the
/// missing resource bundle, ending the process.
@Suite struct InstalledBinaryTests {
    @Test(.enabled(if: !TestPostgres.onCitus, "an empty Citus database is distributed by its own setup"))
    func theBinaryAloneMigratesAndServes() async throws {
        let folder = try makeTemporaryDirectory("habitsync-installed")
        defer { try? FileManager.default.removeItem(at: folder) }
        let binary = folder.appendingPathComponent("habitsync-server")
        // Copied by `cp`, not in this process: a child another test forks here while this
        // process holds the copy open for writing inherits that descriptor, and executing the
        // copy then fails with ETXTBSY ("Text file busy"; seen once in a full run).
        let copied = try await HabitSyncBinary.run(executable: URL(fileURLWithPath: "/bin/cp"), [HabitSyncBinary.url.path, binary.path])
        try #require(copied.status == 0, "\(copied.stderr)")
        // A SwiftPM resource bundle is looked for beside the binary, then in the build folder
        // it was built in: present here, absent on a server. The binary names none.
        let image = try Data(contentsOf: binary)
        #expect(image.range(of: Data("HabitSyncServer.resources".utf8)) == nil, "the binary looks for a resource bundle beside it")
        let database = try await TestPostgres.shared.emptyDatabase()
        // Nothing names a migrations folder: the compiled-in migrations are all there is.
        let environment = ["DATABASE_URL": database.connectionString, "HABITSYNC_MIGRATIONS_DIR": ""]

        let up = try await HabitSyncBinary.run(executable: binary, ["migrate", "up"], environment: environment, in: folder)
        #expect(up.status == 0, "\(up.stderr)")
        let status = try await HabitSyncBinary.run(executable: binary, ["migrate", "status", "--json"], environment: environment, in: folder)
        #expect(status.status == 0, "\(status.stderr)")
        let migrationFiles = try FileManager.default.contentsOfDirectory(atPath: TestPostgres.migrationsDirectory.path).filter { $0.hasSuffix(".sql") }
        let report = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        let states = (report["migrations"] as? [[String: Any]] ?? []).compactMap { $0["state"] as? String }
        #expect(states.count == migrationFiles.count && states.allSatisfy { $0 == "applied" }, "\(status.stdout)")

        let port = try freeLoopbackPort()
        let log = try makeTemporaryDirectory("habitsync-installed-log")
        defer { try? FileManager.default.removeItem(at: log) }
        let logFile = log.appendingPathComponent("server.log")
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        let server = Process()
        server.executableURL = binary
        // --migrate check: refuses to start if the compiled-in migrations were not all applied.
        server.arguments = ["serve", "--port", String(port), "--migrate", "check"]
        server.currentDirectoryURL = folder
        server.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        server.standardOutput = try FileHandle(forWritingTo: logFile)
        server.standardError = server.standardOutput
        server.standardInput = FileHandle.nullDevice
        try server.run()
        defer { if server.isRunning { kill(server.processIdentifier, SIGKILL) } }
        let base = "http://127.0.0.1:\(port)"
        let ready = try await TestHTTP.awaitReady(base) { server.isRunning }
        try #require(ready == 200, "the installed server never became ready: \((try? String(contentsOf: logFile, encoding: .utf8)) ?? "")")

        // Unauthenticated, and the document the repository holds, byte for byte.
        let document = try await TestHTTP.request("GET", "\(base)/openapi.yaml")
        #expect(document.status == 200)
        let shipped = try Data(contentsOf: ClientPackageTests.root.appendingPathComponent("Sources/HabitSyncServer/Resources/openapi.yaml"))
        #expect(document.body == shipped)

        // The README's first sync, with this copy as `B`.
        let (commands, shown) = try DocumentedExampleTests.firstSync()
        let walk = try await DocumentedExampleTests.run([commands], baseURL: base, binary: binary, environment: environment)
        let printed = DocumentedExampleTests.answers(walk.first ?? [])
        try #require(printed.count == shown.count, "\(walk)")
        for (index, (expected, answer)) in zip(shown, printed).enumerated() {
            DocumentedExampleTests.expectSame(expected, answer, "README's first sync through the installed binary, answer \(index + 1)")
        }

        // It created nothing beside itself (no data folder: DATABASE_URL names the database).
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["habitsync-server"])
        kill(server.processIdentifier, SIGTERM)
        let termination = await server.exited()
        #expect(termination.status == 0 && !termination.bySignal, "exit \(termination.status)")
    }
}
