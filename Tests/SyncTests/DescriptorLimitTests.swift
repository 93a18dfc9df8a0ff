import Foundation
import ServerHarness
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
    import SyncTestSupport
#endif

/// Issue 25, item 6: descriptors. `serve` raises its soft open-file limit to the hard one,
/// caps HTTP connections at what fits beside the pool, and at the cap closes the longest-idle
/// connection for a new one. Before, systemd's default 1,024 applied, and 1,100 idle
/// connections made another user's push time out (the accept loop stalled on EMFILE).
@Suite struct DescriptorLimitTests {
    @Test func idleConnectionsBeyondTheLimitDoNotStopAnotherUsersPush() async throws {
        // This process opens a few hundred sockets of its own.
        var own = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &own)
        own.rlim_cur = own.rlim_max
        setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &own)

        let world = try await SyncWorld.make()
        let directory = try makeTemporaryDirectory("habitsync-descriptors")
        defer { try? FileManager.default.removeItem(at: directory) }
        // A soft limit of 128 under a hard one of 256, as a unit without LimitNOFILE would give.
        let server = ServerProcess(
            binary: HabitSyncBinary.url, databaseURL: world.database.connectionString, logDirectory: directory,
            extraArguments: [
                "--migrate", "off", "--migrations-dir", TestPostgres.migrationsDirectory.path, "--header-timeout", "10m", "--keep-alive-timeout", "10m",
                // Not a test of timeouts: on Citus beside a build, the default 5 s cut the push (503).
                "--statement-timeout", "60s", "--pool-lease-timeout", "60s",
            ],
            launcher: ["/bin/sh", "-c", "ulimit -Sn 128 && ulimit -Hn 256 && exec \"$0\" \"$@\""])
        try await server.start()
        defer { server.send(SIGKILL) }
        let log = try String(contentsOf: server.logFile, encoding: .utf8)
        #expect(log.contains("raised the open-file limit"), "\(server.logTail())")
        #expect(log.contains("--max-streams cannot be reached"), "\(server.logTail())")

        // 300 connections that send nothing: more than the 182 that fit.
        let port = server.port
        let idle = try await onOwnThread { try (0..<300).map { _ in try RawHTTPConnection(port: port) } }
        defer { idle.forEach { $0.close() } }
        let alice = SyncClient(baseURL: server.baseURL, token: try await world.token(user: "alice"), device: "phone", connections: 1)
        let reply = try await alice.push([Wire.change("habits", UUID(), at: Wire.at(0), record: Wire.habit())])
        #expect(reply.status == 200)
        // The oldest idle ones were closed to make room; the newest are still open.
        let closed = idle.filter(\.isClosedByServer).count
        #expect(closed >= 300 - 182, "\(closed) of 300 idle connections closed")
        #expect(!idle[299].isClosedByServer)
        let metrics = try await alice.client.get("/metrics").text
        #expect(metrics.contains("habitsync_http_connections_cut_total{reason=\"evicted_idle\"}"))
    }
}
