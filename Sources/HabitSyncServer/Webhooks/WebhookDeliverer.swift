import Foundation
import GuardedFetch
import HabitSyncDomain
import HabitSyncStore
import Logging
import NIOPosix
import ServiceLifecycle

/// Sends the webhook outbox (docs/operations.md, "Webhooks"), on every replica: claims due
/// deliveries (`WebhookQueue.claim`, each user's next only, so a user's deliveries to an
/// endpoint arrive in the order of their pushes), POSTs each, signed, through the guarded fetch
/// (HTTPS, public addresses, a timeout, no redirects), and records what came of them. Nothing
/// here runs on a request's path: a receiver that is down or slow costs pushes nothing.
public final class WebhookDeliverer: Service, Sendable {
    let queue: WebhookQueue
    let settings: WebhookSettings
    let metrics: ServerMetrics
    let logger: Logger
    /// The blocking transfers run here, not on the shared thread pool the identity providers'
    /// key fetches use: a slow receiver cannot hold those up.
    let threads: NIOThreadPool
    /// Keeps its connections between rounds: a receiver's connection (and TLS session) serves
    /// its next deliveries rather than a handshake each.
    let fetcher: GuardedFetcher

    public static let userAgent = "habitsync-server webhook"

    public init(queue: WebhookQueue, settings: WebhookSettings, metrics: ServerMetrics, logger: Logger) {
        self.queue = queue
        self.settings = settings
        self.metrics = metrics
        self.logger = logger
        threads = NIOThreadPool(numberOfThreads: max(1, settings.concurrency))
        fetcher = GuardedFetcher(policy: settings.fetch, threadPool: threads, keepsConnections: true)
    }

    public func run() async throws {
        threads.start()
        defer { threads.shutdownGracefully { _ in } }
        let clock = ContinuousClock()
        var prunedAt = clock.now
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            let sent = await round()
            if clock.now - prunedAt >= settings.pruneInterval {
                prunedAt = clock.now
                await prune()
            }
            // A full round: more may be due at once.
            if sent < settings.concurrency {
                await cancelWhenGracefulShutdown { try? await Task.sleep(for: self.settings.pollInterval) }
            }
        }
    }

    /// One claim, its sends, their outcomes; returns how many were claimed.
    func round() async -> Int {
        let claimed: [WebhookQueue.Claimed]
        do {
            claimed = try await queue.claim(limit: settings.concurrency, lease: settings.lease)
        } catch {
            logger.warning("webhooks: could not claim deliveries", metadata: ["error": "\(error)"])
            return 0
        }
        guard !claimed.isEmpty else { return 0 }
        let outcomes = await withTaskGroup(of: (WebhookQueue.Claimed, WebhookQueue.Outcome).self) { group in
            for delivery in claimed { group.addTask { (delivery, await self.attempt(delivery)) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        do {
            let tally = try await queue.finish(outcomes)
            metrics.recordWebhookAttempts(delivered: tally.delivered, retried: tally.retried, dead: tally.dead)
        } catch {
            // Still leased: when the lease ends they are sent again (at least once).
            logger.warning("webhooks: could not record what came of deliveries", metadata: ["error": "\(error)", "count": "\(outcomes.count)"])
        }
        return claimed.count
    }

    /// One POST. The log names the endpoint and the delivery, never the URL (which may hold a
    /// credential of the receiver's), the body or the answer.
    func attempt(_ delivery: WebhookQueue.Claimed) async -> WebhookQueue.Outcome {
        let body: [UInt8]
        do {
            body = try await self.body(delivery)
        } catch {
            return .failed(status: nil, reason: "could not read the records: \(error)")
        }
        let id = delivery.deliveryID.uuidString.lowercased()
        let timestamp = Int64(Date().timeIntervalSince1970)
        let headers = ["Content-Type: application/json"] + WebhookSignature.headers(id: id, timestamp: timestamp, body: body, secret: delivery.secret)
        let outcome: WebhookQueue.Outcome
        do {
            let status = try await fetcher.post(delivery.url, headers: headers, body: body, userAgent: Self.userAgent)
            outcome = (200..<300).contains(status) ? .delivered(status: status) : .failed(status: status, reason: "HTTP status \(status)")
        } catch {
            outcome = .failed(status: nil, reason: error.description)
        }
        if case .failed(let status, let reason) = outcome {
            logger.info(
                "webhooks: a delivery failed",
                metadata: [
                    "endpoint": "\(delivery.endpointID)", "delivery": "\(id)", "attempt": "\(delivery.attempt)", "status": "\(status.map(String.init) ?? "none")",
                    "reason": "\(reason)",
                ])
        }
        return outcome
    }

    /// `{"type":"sync.changes","timestamp":…,"data":{tenantId, userId, deviceId, firstVersion,
    /// lastVersion, changes, derived[, records]}}`: Standard Webhooks' envelope.
    func body(_ delivery: WebhookQueue.Claimed) async throws -> [UInt8] {
        guard case .object(let event) = try JSONParser.parse(bytes: Array(delivery.event.utf8)) else { throw WebhookEventUnreadable() }
        var data = JSONObjectWriter(reservingCapacity: delivery.event.utf8.count + 128)
        data.add("tenantId", delivery.tenantID.uuidString.lowercased())
        data.add("userId", delivery.userID)
        for key in ["deviceId", "firstVersion", "lastVersion", "changes", "derived"] {
            if let value = event[key] { data.add(key, json: value.jsonText) }
        }
        if delivery.includeRecords {
            guard case .number(let first)? = event["firstVersion"], case .number(let last)? = event["lastVersion"],
                let firstVersion = Int64(exactly: first), let lastVersion = Int64(exactly: last)
            else { throw WebhookEventUnreadable() }
            data.add("records", jsonArray: try await queue.records(of: delivery, firstVersion: firstVersion, lastVersion: lastVersion))
        }
        var envelope = JSONObjectWriter(reservingCapacity: data.json.utf8.count + 96)
        envelope.add("type", "sync.changes")
        envelope.add("timestamp", WireTime.format(delivery.createdAt))
        envelope.add("data", json: data.json)
        return Array(envelope.json.utf8)
    }

    func prune() async {
        do {
            metrics.recordWebhookPruned(try await queue.prune(retention: settings.retention))
        } catch {
            logger.warning("webhooks: could not apply the retention", metadata: ["error": "\(error)"])
        }
    }
}

/// A stored event that is not the JSON the push wrote (never expected).
struct WebhookEventUnreadable: Error, CustomStringConvertible {
    var description: String { "the stored event is not readable" }
}
