import Foundation
import HabitSyncStore
import Logging
import ServiceLifecycle

/// Sends the background wakes due (docs/operations.md, "Waking iPhones"), on every replica:
/// claims the tokens a push marked (`WakeQueue.claim`: at most one per device per the tenant's
/// interval), sends each a silent notification, and drops a token APNs says is gone. Nothing
/// here runs on a request's path.
public final class PushWaker: Service, Sendable {
    let queue: WakeQueue
    let settings: WakeSettings
    let metrics: ServerMetrics
    let logger: Logger

    public init(queue: WakeQueue, settings: WakeSettings, metrics: ServerMetrics, logger: Logger) {
        self.queue = queue
        self.settings = settings
        self.metrics = metrics
        self.logger = logger
    }

    public func run() async throws {
        // Made here, and shut down before run returns: an HTTP client dropped without its
        // shutdown stops the process, so none exists unless the service runs.
        let apns = APNsClient(settings: settings)
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            let sent = await round(apns)
            if sent < settings.concurrency {
                await cancelWhenGracefulShutdown { try? await Task.sleep(for: self.settings.pollInterval) }
            }
        }
        await apns.shutdown()
    }

    /// What APNs' answer means for the token: 200 sent; 410, or 400 `BadDeviceToken`, the token
    /// is gone for good; anything else a failure, tried again after the interval.
    static func outcome(of answer: APNsClient.Answer) -> WakeQueue.Outcome {
        switch (answer.status, answer.reason) {
        case (200, _): .sent
        case (410, _), (400, "BadDeviceToken"): .tokenInvalid
        default: .failed(reason: "APNs status \(answer.status)\(answer.reason.map { " \($0)" } ?? "")")
        }
    }

    /// One claim and its sends; returns how many were claimed.
    func round(_ apns: APNsClient) async -> Int {
        let claimed: [WakeQueue.Claimed]
        do {
            claimed = try await queue.claim(limit: settings.concurrency)
        } catch {
            logger.warning("wakes: could not claim the wakes due", metadata: ["error": "\(error)"])
            return 0
        }
        guard !claimed.isEmpty else { return 0 }
        let outcomes = await withTaskGroup(of: (WakeQueue.Claimed, WakeQueue.Outcome).self) { group in
            for wake in claimed {
                group.addTask {
                    do {
                        return (wake, Self.outcome(of: try await apns.send(wake)))
                    } catch {
                        return (wake, .failed(reason: "\(type(of: error))"))
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        for (wake, outcome) in outcomes {
            metrics.recordWake(outcome)
            if case .failed(let reason) = outcome {
                // Names the tenant and device, never the token.
                logger.info("wakes: a wake was not sent", metadata: ["tenant": "\(wake.tenantID)", "device": "\(wake.deviceID)", "reason": "\(reason)"])
            }
        }
        do {
            try await queue.finish(outcomes)
        } catch {
            logger.warning("wakes: could not record what came of the wakes", metadata: ["error": "\(error)"])
        }
        return claimed.count
    }
}
