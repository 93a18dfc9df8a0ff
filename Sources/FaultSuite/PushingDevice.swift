import Foundation
import ServerHarness

/// A device working through its queue of batches, as an app does: a batch that fails is sent
/// again, byte for byte, until the server acknowledges it, then the next one.
struct PushingDevice: Sendable {
    enum RetryPolicy: Sendable {
        /// Retry refused connections and 503s (honouring Retry-After) until acknowledged.
        case untilAcknowledged
        /// Stop at the first refused connection (the server is going away for good).
        case stopWhenRefused
    }

    let index: Int
    let user: String
    let client: DeviceClient
    let batches: [TrackedBatch]

    /// Runs the queue; returns how many batches were acknowledged. Gives up at `deadline`.
    func run(log: PushLog, policy: RetryPolicy, deadline: ContinuousClock.Instant) async -> Int {
        let clock = ContinuousClock()
        var acknowledged = 0
        for (number, batch) in batches.enumerated() {
            while clock.now < deadline && !Task.isCancelled {
                let started = clock.now
                let outcome: PushAttempt.Outcome
                do {
                    let reply = try await client.push(batch.body)
                    if reply.status == 200 {
                        let results = ((try? reply.json())?["results"] as? [[String: Any]] ?? []).map { $0["status"] as? String ?? "" }
                        outcome = .acknowledged(results: results)
                    } else {
                        outcome = .status(reply.status, retryAfter: reply.header("Retry-After"))
                    }
                } catch {
                    outcome = .transportFailure
                }
                log.append(PushAttempt(device: index, batch: number, started: started, finished: clock.now, outcome: outcome))
                switch outcome {
                case .acknowledged:
                    acknowledged += 1
                case .status(503, let retryAfter):
                    // Retry-After is whole seconds; a device waits at least that, capped for the test.
                    try? await Task.sleep(for: .milliseconds(min(2000, 1000 * (Int(retryAfter ?? "1") ?? 1))))
                    continue
                case .status:
                    return acknowledged  // anything else is a finding, reported by the scenario
                case .transportFailure:
                    if policy == .stopWhenRefused { return acknowledged }
                    try? await Task.sleep(for: .milliseconds(100))
                    continue
                }
                break
            }
        }
        return acknowledged
    }
}

extension FaultEnvironment {
    /// `count` devices, each its own user, each with a queue of `batches` tracked batches.
    func pushingDevices(count: Int, batches: Int, prefix: String, baseURL: String) async throws -> [PushingDevice] {
        var devices: [PushingDevice] = []
        for index in 0..<count {
            let user = "\(prefix)-user-\(index)"
            let client = try await client(user: user, device: "\(prefix)-device-\(index)", baseURL: baseURL)
            devices.append(PushingDevice(index: index, user: user, client: client, batches: (0..<batches).map { TrackedBatch(round: $0) }))
        }
        return devices
    }
}
