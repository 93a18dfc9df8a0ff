import Foundation
import ServerHarness

/// The realtime measurements (`habitsync-bench --realtime`): two replicas on one database,
/// streams spread over both, the time from a push's acknowledgement on replica A to the event
/// on a device streaming from replica B; replica B's memory with many idle streams; push
/// throughput with and without the streams open.
enum RealtimeBench {
    struct Result: Codable {
        var streams = 0
        var latencyMilliseconds: Percentiles?
        /// From the moment the push was sent, for scale: the event usually arrives before the
        /// push's response is read (NOTIFY is delivered at commit, the response follows it).
        var sentToEventMilliseconds: Percentiles?
        var idleStreams = 0
        var residentIdleMiB = 0.0
        var residentWithIdleStreamsMiB = 0.0
        var pushWithoutStreams: Workloads.PushResult?
        var pushWithStreams: Workloads.PushResult?
    }

    /// - Parameters:
    ///   - streams: streams over both replicas for the latency, 10 devices per user, half on each.
    ///   - idleStreams: streams on replica B when its memory is read.
    static func measure(_ environment: BenchEnvironment, streams: Int, idleStreams: Int, samples: Int, batches: Int, log: (String) -> Void) async throws -> Result {
        var result = Result()
        let replicaB = try await environment.startReplica(name: "server-b")
        do {
            // Each replica's LISTEN connection comes up beside its HTTP listener: wait for both.
            for server in [environment.server, replicaB] { try await waitUntilListening(baseURL: server.baseURL) }
            log("push with 16 devices, no streams open…")
            result.pushWithoutStreams = try await Workloads.push(environment, devices: 16, batches: batches)
            result.residentIdleMiB = replicaB.residentMiB()

            log("opening \(streams) streams over two replicas…")
            let users = max(1, streams / 10)
            var tokens: [String] = []
            for user in 0..<users { tokens.append(try await environment.database.token(user: "rt-\(user)")) }
            let portA = environment.server.port, portB = replicaB.port
            let userTokens = tokens
            let opened = try await onOwnThread { () -> [[EventStreamSocket]] in
                try userTokens.enumerated().map { user, token in
                    try (0..<10).map { device in try EventStreamSocket(port: device < 5 ? portA : portB, token: token, device: "rt-\(user)-\(device)") }
                }
            }
            result.streams = opened.count * 10

            log("\(samples) pushes on replica A, each timed to its event on replica B…")
            let latencies = try await onOwnThread { () -> (fromAck: [Double], fromSend: [Double]) in
                let pusher = try PlainHTTPConnection(port: portA)
                var samplesTaken: [Double] = [], fromSend: [Double] = []
                for sample in 0..<samples {
                    let user = sample % userTokens.count
                    let headers = ["Authorization": "Bearer \(userTokens[user])", "X-Device-Id": "rt-pusher", "Content-Type": "application/json"]
                    let body = Workloads.habitBatch([UUID()])
                    let sent = ContinuousClock.now
                    let status = try pusher.post("/v1/sync/push", headers: headers, body: body).status
                    guard status == 200 else { throw BenchError("push answered \(status)") }
                    let acknowledged = ContinuousClock.now
                    // The user's first stream on replica B.
                    guard try opened[user][5].waitFor("event: change", milliseconds: 60_000) else { throw BenchError("no event within 60 s") }
                    let arrived = ContinuousClock.now
                    samplesTaken.append(Double((arrived - acknowledged) / .microseconds(1)) / 1000)
                    fromSend.append(Double((arrived - sent) / .microseconds(1)) / 1000)
                    for stream in opened[user] { stream.drain() }
                }
                return (samplesTaken, fromSend)
            }
            result.latencyMilliseconds = Percentiles(latencies.fromAck)
            result.sentToEventMilliseconds = Percentiles(latencies.fromSend)

            log("push with 16 devices, \(result.streams) streams open…")
            result.pushWithStreams = try await Workloads.push(environment, devices: 16, batches: batches)

            log("opening streams up to \(idleStreams) on replica B…")
            let more = max(0, idleStreams - result.streams / 2)
            var idleTokens: [String] = []
            for user in 0..<(more + 9) / 10 { idleTokens.append(try await environment.database.token(user: "idle-\(user)")) }
            let idleUserTokens = idleTokens
            let idle = try await onOwnThread { () -> [EventStreamSocket] in
                try (0..<more).map { index in try EventStreamSocket(port: portB, token: idleUserTokens[index / 10], device: "idle-\(index)") }
            }
            result.idleStreams = result.streams / 2 + idle.count
            result.residentWithIdleStreamsMiB = replicaB.residentMiB()
            withExtendedLifetime((opened, idle)) {}
        } catch {
            await replicaB.stop()
            throw error
        }
        await replicaB.stop()
        return result
    }

    static func table(_ result: Result) -> String {
        func ms(_ value: Double?) -> String { value.map { String(format: "%.1f", $0) } ?? "–" }
        let latency = result.latencyMilliseconds
        return """
            | realtime | value | target |
            |---|---|---|
            | push ack on replica A → event on replica B, p50 (\(result.streams) streams over two replicas, \(latency?.count ?? 0) pushes) | \(ms(latency?.p50)) ms | 50 ms |
            | … p99 | \(ms(latency?.p99)) ms | 200 ms |
            | push sent → event on replica B, p50 / p99 (includes the push itself) | \(ms(result.sentToEventMilliseconds?.p50)) / \(ms(result.sentToEventMilliseconds?.p99)) ms | |
            | replica B RSS, idle | \(ms(result.residentIdleMiB)) MiB | |
            | replica B RSS with \(result.idleStreams) idle streams | \(ms(result.residentWithIdleStreamsMiB)) MiB (+\(ms(result.residentWithIdleStreamsMiB - result.residentIdleMiB))) | < +200 MiB |
            | push, 16 devices, no streams open | \(String(format: "%.0f", result.pushWithoutStreams?.recordsPerSecond ?? 0)) records/s (p99 \(ms(result.pushWithoutStreams?.latencyMilliseconds.p99)) ms) | |
            | push, 16 devices, \(result.streams) streams open | \(String(format: "%.0f", result.pushWithStreams?.recordsPerSecond ?? 0)) records/s (p99 \(ms(result.pushWithStreams?.latencyMilliseconds.p99)) ms) | |
            """
    }
}
