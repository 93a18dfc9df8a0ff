import Foundation
import HabitSyncAuth
import HabitSyncDomain
import HabitSyncStore
import ServerHarness
import Synchronization

/// Issue 50: one tenant floods at ten times its pushes-a-second limit while another tenant's
/// devices push as usual. The quiet tenant's push latency alone, then beside the flood, on one
/// server in one run; the flood's pushes are mostly refused (`429 tenant_limit_exceeded`)
/// before any database work.
enum NoisyTenantBench {
    struct Result: Codable {
        var quietAlone: Percentiles?
        var quietBesideFlood: Percentiles?
        /// The alone rounds split in two (the one before each flood, the one after): how far two
        /// measurements of the same thing differ here, the noise the ratio is read against.
        var quietAloneBefore: Percentiles?
        var quietAloneAfter: Percentiles?
        var limit = 0
        var floodAttemptsPerSecond = 0.0
        var floodTaken = 0
        var floodRefused = 0
    }

    /// A gateway-app push: two usage events and a habit edit.
    static func body(now: Date) -> Data {
        let time = WireTime.format(now)
        let changes: [[String: Any]] = [
            [
                "collection": "usageEvents", "op": "upsert", "id": UUID().uuidString, "updatedAt": time,
                "record": ["eventType": "exit_to_focus", "timestamp": time, "pauseDuration": 5, "timerDuration": 30],
            ],
            [
                "collection": "usageEvents", "op": "upsert", "id": UUID().uuidString, "updatedAt": time,
                "record": ["eventType": "deepen_pause", "timestamp": time, "pauseDuration": 8, "timerDuration": 30],
            ],
            [
                "collection": "habits", "op": "upsert", "id": UUID().uuidString, "updatedAt": time,
                "record": ["name": "Read", "habitType": "formation", "goalCount": 1, "goalUnit": "times", "schedule": ["type": "daily"], "startDate": "2026-01-01"],
            ],
        ]
        return (try? JSONSerialization.data(withJSONObject: ["batchId": UUID().uuidString, "changes": changes])) ?? Data()
    }

    /// Set when the quiet tenant is done: the flood stops.
    final class FloodSwitch: Sendable {
        let stopped = Atomic<Bool>(false)
    }

    static func quietTokens(_ environment: BenchEnvironment, devices: Int, round: String) async throws -> [String] {
        var tokens: [String] = []
        for device in 0..<devices { tokens.append(try await environment.database.token(user: "quiet-\(round)-\(device)")) }
        return tokens
    }

    /// Pushes a second of each quiet device: together a third or so of what this machine's
    /// server takes (devices pushing normally, not a load test; at saturation any other work
    /// would show as queueing).
    static let quietPushesPerSecond = 20.0

    /// The quiet tenant's devices (one user each), each pushing `pushes` times, paced at
    /// `quietPushesPerSecond`; latencies in ms.
    static func quiet(port: Int, tokens: [String], pushes: Int) async throws -> [Double] {
        let clock = ContinuousClock()
        return try await withThrowingTaskGroup(of: [Double].self) { group in
            for token in tokens {
                group.addTask {
                    try await onOwnThread {
                        let connection = try PlainHTTPConnection(port: port)
                        let headers = ["Authorization": "Bearer \(token)", "X-Device-Id": "phone", "Content-Type": "application/json"]
                        let started = clock.now
                        return try (0..<pushes).map { index in
                            let due = started + .seconds(Double(index) / quietPushesPerSecond)
                            if clock.now < due { Thread.sleep(forTimeInterval: (due - clock.now) / .seconds(1)) }
                            let sent = clock.now
                            _ = try connection.pushUntilStored(headers: headers, body: body(now: Date()), what: "quiet push")
                            return (clock.now - sent) / .milliseconds(1)
                        }
                    }
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
    }

    /// The quiet tenant's pushes beside the flood: 4 connections of the noisy tenant, together
    /// ten times its limit a second, paced, until the quiet devices are done.
    static func besideFlood(port: Int, quietTokens: [String], pushes: Int, floodTokens: [String], limit: Int) async throws
        -> (quiet: [Double], taken: Int, refused: Int, attemptsPerSecond: Double)
    {
        let perConnection = Double(limit) * 10 / Double(floodTokens.count)
        let flooding = FloodSwitch()
        let clock = ContinuousClock()
        let started = clock.now
        return try await withThrowingTaskGroup(of: (quiet: [Double]?, taken: Int, refused: Int, attempts: Int).self) { group in
            for token in floodTokens {
                group.addTask {
                    try await onOwnThread {
                        let connection = try PlainHTTPConnection(port: port)
                        let headers = ["Authorization": "Bearer \(token)", "X-Device-Id": "loop", "Content-Type": "application/json"]
                        var (taken, refused, attempts) = (0, 0, 0)
                        let started = clock.now
                        while !flooding.stopped.load(ordering: .relaxed) {
                            // Paced: the attempts so far are due by now.
                            let due = started + .seconds(Double(attempts) / perConnection)
                            if clock.now < due { Thread.sleep(forTimeInterval: (due - clock.now) / .seconds(1)) }
                            let (status, _) = try connection.post("/v1/sync/push", headers: headers, body: body(now: Date()))
                            attempts += 1
                            if status == 200 { taken += 1 } else if status == 429 { refused += 1 }
                        }
                        return (nil, taken, refused, attempts)
                    }
                }
            }
            group.addTask {
                defer { flooding.stopped.store(true, ordering: .relaxed) }
                return (try await quiet(port: port, tokens: quietTokens, pushes: pushes), 0, 0, 0)
            }
            var quietLatencies: [Double] = []
            var sums = (taken: 0, refused: 0, attempts: 0)
            for try await part in group {
                if let latencies = part.quiet { quietLatencies = latencies }
                sums.taken += part.taken
                sums.refused += part.refused
                sums.attempts += part.attempts
            }
            return (quietLatencies, sums.taken, sums.refused, Double(sums.attempts) / ((clock.now - started) / .seconds(1)))
        }
    }

    /// Alone, beside the flood, alone again, `rounds` times (so that drift of a busy machine
    /// falls on both kinds), each with new quiet users; the latencies of each kind pooled. The
    /// two alone phases of a round, pooled apart, give the noise: the same measurement twice.
    static func measure(_ environment: BenchEnvironment, devices: Int, pushes: Int, limit: Int, rounds: Int, log: (String) -> Void) async throws -> Result {
        var result = Result()
        result.limit = limit
        let key = TenantKey.generatedSecret()
        let pool = environment.database.pool
        let noisy = try await TenantStore(pool: pool).create(name: "noisy-\(UUID().uuidString.prefix(8))", key: key).id
        _ = try await TenantLimitsStore(pool: pool).setLimits(tenantID: noisy, [.pushesPerSecond: Int64(limit)])
        var floodTokens: [String] = []
        for index in 0..<4 { floodTokens.append(try await TokenMinter.mint(tenantID: noisy, userID: "loop-\(index)", key: key, ttl: 7200)) }
        let port = environment.server.port
        log("noisy tenant: warming up…")
        _ = try await quiet(port: port, tokens: try await quietTokens(environment, devices: devices, round: "warm"), pushes: 10)
        var before: [Double] = [], beside: [Double] = [], after: [Double] = [], attemptsPerSecond: [Double] = []
        for round in 0..<rounds {
            log("noisy tenant, round \(round + 1) of \(rounds): the quiet tenant alone, \(devices) devices × \(pushes) pushes…")
            before += try await quiet(port: port, tokens: try await quietTokens(environment, devices: devices, round: "before-\(round)"), pushes: pushes)
            log("noisy tenant, round \(round + 1) of \(rounds): beside a flood at \(limit * 10) pushes a second…")
            let flood = try await besideFlood(
                port: port, quietTokens: try await quietTokens(environment, devices: devices, round: "beside-\(round)"), pushes: pushes,
                floodTokens: floodTokens, limit: limit)
            beside += flood.quiet
            result.floodTaken += flood.taken
            result.floodRefused += flood.refused
            attemptsPerSecond.append(flood.attemptsPerSecond)
            log("noisy tenant, round \(round + 1) of \(rounds): alone again…")
            after += try await quiet(port: port, tokens: try await quietTokens(environment, devices: devices, round: "after-\(round)"), pushes: pushes)
        }
        result.quietAlone = Percentiles(before + after)
        result.quietAloneBefore = Percentiles(before)
        result.quietAloneAfter = Percentiles(after)
        result.quietBesideFlood = Percentiles(beside)
        result.floodAttemptsPerSecond = attemptsPerSecond.reduce(0, +) / Double(max(attemptsPerSecond.count, 1))
        return result
    }

    static func table(_ result: Result) -> String {
        let alone = result.quietAlone, beside = result.quietBesideFlood
        let before = result.quietAloneBefore, after = result.quietAloneAfter
        func ms(_ value: Double?) -> String { String(format: "%.1f", value ?? 0) }
        func ratio(_ a: Double?, _ b: Double?) -> String { String(format: "%.2f", (b ?? 0) / max(a ?? 1, 0.001)) }
        return """
            | quiet tenant's pushes | count | p50 ms | p99 ms |
            |---|---|---|---|
            | alone (before and after each flood) | \(alone?.count ?? 0) | \(ms(alone?.p50)) | \(ms(alone?.p99)) |
            | beside a tenant flooding at \(String(format: "%.0f", result.floodAttemptsPerSecond)) pushes/s (limit \(result.limit)/s: \(result.floodTaken) taken, \(result.floodRefused) refused) | \(beside?.count ?? 0) | \(ms(beside?.p50)) | \(ms(beside?.p99)) |
            | **beside ÷ alone** (target ≤ 1.2) | | \(ratio(alone?.p50, beside?.p50)) | \(ratio(alone?.p99, beside?.p99)) |
            | the noise: alone after ÷ alone before (\(ms(before?.p50)) / \(ms(before?.p99)) and \(ms(after?.p50)) / \(ms(after?.p99)) ms) | | \(ratio(before?.p50, after?.p50)) | \(ratio(before?.p99, after?.p99)) |
            """
    }
}
