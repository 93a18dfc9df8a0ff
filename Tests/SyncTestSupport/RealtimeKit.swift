import Foundation
import HabitSyncAuth
import HabitSyncClient
import ServerHarness
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// SDK devices on a server's event stream (`GET /v1/sync/events`): the realtime, epoch and
/// Citus outage tests share them.
public enum RealtimeKit {
    public typealias Events = AsyncThrowingStream<ServerSentEvent, any Error>.AsyncIterator

    /// Waits (by a count of checks) until the server's LISTEN connection is up.
    public static func waitUntilListening(_ server: RunningServer) async throws {
        try await ServerHarness.waitUntilListening(baseURL: server.baseURL)
    }

    public static func engine(
        _ world: SyncWorld, _ server: RunningServer, user: String, device: String,
        tenant: (UUID, TenantKey)? = nil
    ) async throws -> SyncEngine {
        let token = try await world.token(user: user, tenant: tenant?.0, key: tenant?.1)
        let url = try #require(URL(string: server.baseURL + "/"))
        return SyncEngine(store: try LocalStore(path: nil, deviceID: device), baseURL: url, transport: URLSessionTransport.patient()) { token }
    }

    /// Opens a stream and reads up to its `: connected` comment: from then on the stream is
    /// registered and gets every later change.
    public static func open(_ engine: SyncEngine, lastEventID: String? = nil) async throws -> Events {
        var events = try await engine.serverEvents(lastEventID: lastEventID).makeAsyncIterator()
        let first = try await events.next()
        #expect(first == .comment("connected"))
        return events
    }

    /// The next event, comments (heartbeats) skipped.
    public static func nextEvent(_ events: inout Events) async throws -> (name: String, id: String?, data: String)? {
        while let message = try await events.next() {
            if case .event(let name, let id, let data) = message { return (name, id, data) }
        }
        return nil
    }
}
