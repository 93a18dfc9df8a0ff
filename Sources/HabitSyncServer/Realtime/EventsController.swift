import Foundation
import HTTPTypes
import HabitSyncAuth
import HabitSyncDomain
import HabitSyncStore
import Hummingbird
import NIOCore
import ServiceLifecycle

/// `GET /v1/sync/events`: a Server-Sent Events stream telling a device when its user's
/// records changed elsewhere, so that it pulls. The device says which it is (`X-Device-Id`,
/// optional: its own pushes are not echoed) and the last version it has seen
/// (`Last-Event-ID`, or `?lastEventId=`): a device behind gets an event at once.
struct EventsController: Sendable {
    let streams: ChangeStreams
    let pull: PullStore
    let metrics: ServerMetrics
    let quotas: TenantQuotas

    func addRoutes(to group: RouterGroup<AuthenticatedRequestContext>) {
        group.get("sync/events") { request, context in try await handleEvents(request, context) }
    }

    static let lastEventHeader = HTTPField.Name("Last-Event-ID")!

    static func lastSeenVersion(_ request: Request) throws -> Int64? {
        guard let text = request.headers[lastEventHeader] ?? request.uri.queryParameters.get("lastEventId") else { return nil }
        guard let version = Int64(text), version >= 0 else {
            throw APIError(.invalidParameter, "Last-Event-ID must be a serverVersion (a whole number ≥ 0)", field: "Last-Event-ID")
        }
        return version
    }

    func handleEvents(_ request: Request, _ context: AuthenticatedRequestContext) async throws -> Response {
        let identity = context.identity
        let device = request.headers[.deviceID] == nil ? nil : try SyncController.deviceID(request)
        let lastSeen = try Self.lastSeenVersion(request)
        // Before the stream is registered: a registered stream's idle and lifetime clocks run.
        try await pull.refuseIfErased(tenant: identity.tenantID, user: identity.userID)
        let tenantLimit = try await quotas.streamLimit(tenant: identity.tenantID)
        let id: Int
        do {
            id = try streams.open(tenant: identity.tenantID, user: identity.userID, device: device, tenantLimit: tenantLimit)
        } catch .tenantLimit {
            metrics.recordTenantStreamRefused(identity.tenantID)
            throw TenantQuotas.refusal(.streams, limit: try await quotas.limits(identity.tenantID)[.streams] ?? 0, retryAfter: 5)
        } catch {
            let scope = error == .userLimit ? "this user already has \(streams.limits.streamsPerUser) open streams" : "this server has as many open streams as it allows"
            throw APIError(.tooManyStreams, scope + "; retry later")
        }
        metrics.recordOpenStreams(streams.openCount)
        do {
            if let lastSeen {
                let latest = try await pull.latestVersion(identity: identity, seen: lastSeen)
                if latest > lastSeen { streams.behind(id, serverVersion: latest) }
            }
        } catch {
            streams.remove(id)
            metrics.recordOpenStreams(streams.openCount)
            throw error
        }
        let streams = streams, metrics = metrics
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream"
        headers[.cacheControl] = "no-cache"
        headers[HTTPField.Name("X-Accel-Buffering")!] = "no"
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody { writer in
                defer {
                    streams.remove(id)
                    metrics.recordOpenStreams(streams.openCount)
                }
                try await withGracefulShutdownHandler {
                    try await writer.write(ByteBuffer(string: "retry: 2000\n: connected\n\n"))
                    while let signal = await streams.next(id) {
                        try await writer.write(ByteBuffer(string: signal.text))
                        metrics.recordStreamEvent(signal.kind)
                        if case .close = signal { break }
                    }
                } onGracefulShutdown: {
                    streams.close([id], reason: "shutting_down")
                }
                try await writer.finish(nil)
            })
    }
}

extension StreamSignal {
    var kind: String {
        switch self {
        case .changed: "change"
        case .pull: "pull"
        case .heartbeat: "heartbeat"
        case .close: "close"
        }
    }
}
