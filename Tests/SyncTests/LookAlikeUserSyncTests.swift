import Foundation
import ServerHarness
import SyncTestSupport
import TestSupport
import Testing

/// Issue 25, item 2, through the real server: a user whose id is canonically equivalent to
/// another's ("café" as U+00E9 and as e + U+0301) is another user everywhere, as in PostgreSQL.
@Suite struct LookAlikeUserSyncTests {
    @Test func aLookAlikeUsersPushIsNotAnnouncedOnTheOtherUsersStream() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            try await waitUntilListening(baseURL: server.baseURL)
            let port = try #require(URLComponents(string: server.baseURL)?.port)
            let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
            let streamToken = try await world.token(user: composed)
            let stream = try await onOwnThread { try RawHTTPConnection(port: port) }
            stream.send("GET /v1/sync/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(streamToken)\r\nX-Device-Id: watch\r\nAccept: text/event-stream\r\n\r\n")
            _ = try await onOwnThread { stream.read(until: ": connected", waitSeconds: 60) }
            // The look-alike pushes a habit; then the stream's own user pushes a usage event.
            let other = try await world.client(server, user: decomposed)
            #expect(try await other.push([Wire.change("habits", UUID(), at: Wire.at(0), record: Wire.habit())]).status == 200)
            let owner = try await world.client(server, user: composed)
            #expect(try await owner.push([Wire.change("usageEvents", UUID(), at: Wire.at(0), record: Wire.usageEvent())]).status == 200)
            // Notices arrive in commit order: a leak would show the habit before the usage event.
            let seen = try await onOwnThread { stream.read(until: "usageEvents", waitSeconds: 60) }
            #expect(seen.contains("usageEvents"), "\(seen)")
            #expect(!seen.contains("habits"), "the look-alike's change reached this stream: \(seen)")
            stream.close()
            // Each is a user of its own in the database too.
            #expect(try await world.count("users", where: "user_id IN ('\(composed)', '\(decomposed)')") == 2)
        }
    }
}
