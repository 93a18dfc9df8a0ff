import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 25, item 4: a `serve` that cannot bind its port exits 1 with a message that names the
/// port and the way out. Before, the change listener was already connecting when the bind
/// failed; the process exited under it and died with SIGSEGV in libpq (4 of 5 starts).
@Suite struct StartFailureTests {
    /// A socket listening on a free loopback port, as another server would.
    static func takePort() throws -> (descriptor: Int32, port: Int) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && listen(descriptor, 16) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        try #require(bound, "could not take a port: errno \(errno)")
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }

    @Test func twentyStartsOnATakenPortEachExitOneWithTheWayOut() async throws {
        let database = try await TestPostgres.shared.migratedDatabase()
        let (descriptor, port) = try Self.takePort()
        defer { close(descriptor) }
        let expected = "error: port \(port) is in use (another habitsync-server?); choose one with --port or HABITSYNC_PORT"
        for attempt in 1...20 {
            let outcome = try await HabitSyncBinary.run([
                "serve", "--port", String(port), "--database-url", database.connectionString, "--migrate", "off",
                "--migrations-dir", TestPostgres.migrationsDirectory.path, "--log-format", "json",
            ])
            #expect(outcome.status == 1, "start \(attempt): exit \(outcome.status)\n\(outcome.stderr.suffix(600))")
            #expect(outcome.stderr.contains(expected), "start \(attempt):\n\(outcome.stderr.suffix(600))")
            #expect(!outcome.stderr.contains("listening for changes"), "start \(attempt): the change listener started before the port was bound")
            if outcome.status != 1 { break }
        }
    }
}
