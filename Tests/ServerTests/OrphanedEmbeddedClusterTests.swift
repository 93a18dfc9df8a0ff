import EmbeddedPostgres
import Foundation
import ServerHarness
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 45, item 2: an embedded database whose server is gone (killed, crashed) is stopped and
/// removed with the project's own commands, and is taken over by the next server; a server
/// that attaches to one another process keeps says so and leaves it running; its keeper stops
/// it. Before, `embedded remove` refused ("stop the server that uses it
/// first") though no server used it, and only `pg_ctl stop` as `postgres` helped.
@Suite struct OrphanedEmbeddedClusterTests {
    static let embedded = ["DATABASE_URL": "", "HABITSYNC_DATA_DIR": ".habitsync"]

    static func server(_ folder: URL, _ name: String) -> ServerProcess {
        ServerProcess(
            binary: HabitSyncBinary.url, databaseURL: nil, logDirectory: folder, name: name, workingDirectory: folder,
            extraArguments: ["--migrations-dir", TestPostgres.migrationsDirectory.path, "--drain-timeout", "10s", "--data-dir", ".habitsync"])
    }

    @Test func aClusterWhoseServerWasKilledIsStoppedAndRemoved() async throws {
        let test = try EmbeddedTestFolder("habitsync-orphan")
        let (folder, cluster) = (test.folder, test.cluster)
        defer { test.cleanUp() }
        let first = Self.server(folder, "first")
        try await first.start()
        first.send(SIGKILL)
        _ = await first.waitForExit(timeout: .seconds(120))
        #expect(test.clusterIsRunning, "the killed server's database is left running")

        let listed = try await HabitSyncBinary.run(["embedded", "list"], environment: Self.embedded, in: folder)
        #expect(listed.stdout.contains("\(cluster.path)  running on port") && listed.stdout.contains("orphaned"), "\(listed.stdout) \(listed.stderr)")
        // The next server takes it over, says so, and stops it when it stops.
        let second = Self.server(folder, "second")
        try await second.start()
        let log = try String(contentsOf: second.logFile, encoding: .utf8)
        #expect(log.contains("left running by a process that is gone"), "\(second.logTail())")
        second.send(SIGKILL)
        _ = await second.waitForExit(timeout: .seconds(120))
        #expect(test.clusterIsRunning)

        // `embedded stop` stops an orphaned one.
        let stopped = try await HabitSyncBinary.run(["embedded", "stop"], environment: Self.embedded, in: folder)
        #expect(stopped.status == 0 && stopped.stdout.contains("stopped \(cluster.path)"), "\(stopped.stdout) \(stopped.stderr)")
        #expect(!test.clusterIsRunning)

        // `embedded remove` stops one first (the case: the server died, its database ran on).
        let third = Self.server(folder, "third")
        try await third.start()
        third.send(SIGKILL)
        _ = await third.waitForExit(timeout: .seconds(120))
        #expect(test.clusterIsRunning)
        let removed = try await HabitSyncBinary.run(["embedded", "remove"], environment: Self.embedded, in: folder)
        #expect(removed.status == 0 && removed.stdout.contains("stopped and removed \(cluster.path)"), "\(removed.stdout) \(removed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: cluster.path))
    }

    @Test func aServerThatAttachesSaysSoAndLeavesItToItsKeeper() async throws {
        let test = try EmbeddedTestFolder("habitsync-attach")
        let folder = test.folder
        defer { test.cleanUp() }
        let keeper = Self.server(folder, "keeper")
        try await keeper.start()
        let guest = Self.server(folder, "guest")
        try await guest.start()
        let log = try String(contentsOf: guest.logFile, encoding: .utf8)
        #expect(
            log.contains("attached to the embedded PostgreSQL another process started") && log.contains("\"keeper_pid\":\"\(keeper.processIdentifier)\"")
                && log.contains("embedded stop --force"), "\(guest.logTail())")

        // In use: stop and remove refuse, naming the process; nothing changes.
        let stop = try await HabitSyncBinary.run(["embedded", "stop"], environment: Self.embedded, in: folder)
        #expect(stop.status == 1 && stop.stderr.hasPrefix("error: ") && stop.stderr.contains("for process \(keeper.processIdentifier)"), "\(stop.stderr)")
        let remove = try await HabitSyncBinary.run(["embedded", "remove"], environment: Self.embedded, in: folder)
        #expect(remove.status == 1 && remove.stderr.contains("nothing was removed"), "\(remove.stderr)")
        #expect(test.clusterIsRunning)
        #expect(try await TestHTTP.request("GET", "\(guest.baseURL)/readyz").status == 200)

        // The guest leaves: the keeper's database keeps running.
        guest.send(SIGTERM)
        #expect(await guest.waitForExit(timeout: .seconds(120)) == 0)
        #expect(test.clusterIsRunning, "stopped under its keeper")
        #expect(try await TestHTTP.request("GET", "\(keeper.baseURL)/readyz").status == 200)
        // The keeper stops it when it stops.
        keeper.send(SIGTERM)
        #expect(await keeper.waitForExit(timeout: .seconds(120)) == 0)
        #expect(!test.clusterIsRunning, "the keeper stops the database")
    }
}
