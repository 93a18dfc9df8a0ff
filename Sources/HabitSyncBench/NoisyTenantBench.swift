import Foundation
import HabitSyncAuth
import HabitSyncDomain
import HabitSyncStore
import SeededRandom
import ServerHarness
import Synchronization

/// Issue 50: one tenant floods at ten times its pushes-a-second limit while another tenant's
/// devices push as usual. The quiet tenant's push latency alone, beside the flood, and beside
/// the same tenant pushing within its limit, on one server in one run; the flood's pushes past
/// the limit are refused (`429 tenant_limit_exceeded`) before any database work.
enum NoisyTenantBench {
    struct Result: Codable {
        var quietAlone: Percentiles?
        var quietBesideFlood: Percentiles?
        var quietBesideWithinLimit: Percentiles?
        /// The alone rounds split in two (the one before each flood, the one after): how far two
        /// measurements of the same thing differ here, the noise the ratio is read against.
        var quietAloneBefore: Percentiles?
        var quietAloneAfter: Percentiles?
        /// The flood's pushes its limit admitted: how long each took, against the quiet tenant's.
        var floodTakenLatency: Percentiles?
        var limit = 0
        var floodAttemptsPerSecond = 0.0
        var floodTaken = 0
        var floodRefused = 0
        var withinLimitTaken = 0
        var withinLimitRefused = 0
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

    /// Set when the quiet tenant is done: the other tenant stops.
    final class StopSwitch: Sendable {
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

    /// When a device pushes: at independent random times (a Poisson process of
    /// `quietPushesPerSecond`, exponential gaps from a seeded generator, the same schedule for
    /// the same seed), as phones of different people do. Until 2026-11-30 every device pushed
    /// on the same 50 ms grid, all four at once: a burst of four pushes on two cores every
    /// 50 ms, whose p99 was any other work that landed in a burst.
    static func sendTimes(pushes: Int, seed: UInt64) -> [Double] {
        var generator = SeededGenerator(seed: seed)
        var at = 0.0
        return (0..<pushes).map { _ in
            at += -log(1 - Double.random(in: 0..<1, using: &generator)) / quietPushesPerSecond
            return at
        }
    }

    /// The quiet tenant's devices (one user each), each pushing `pushes` times at the times
    /// `sendTimes` gives (a push due while the device's previous one is still running is sent
    /// when that one returns); latencies in ms, from the send.
    static func quiet(port: Int, tokens: [String], pushes: Int, seed: UInt64) async throws -> [Double] {
        let clock = ContinuousClock()
        return try await withThrowingTaskGroup(of: [Double].self) { group in
            for (index, token) in tokens.enumerated() {
                let times = sendTimes(pushes: pushes, seed: seed &+ UInt64(index))
                group.addTask {
                    try await onOwnThread {
                        let connection = try PlainHTTPConnection(port: port)
                        let headers = ["Authorization": "Bearer \(token)", "X-Device-Id": "phone", "Content-Type": "application/json"]
                        let started = clock.now
                        return try times.map { time in
                            let due = started + .seconds(time)
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

    /// What the other tenant did while the quiet one pushed.
    struct Neighbour {
        var quiet: [Double] = []
        /// The latencies of its pushes that were stored, in ms.
        var taken: [Double] = []
        var refused = 0
        var attempts = 0
        /// How long the phase ran: until the quiet devices were done and the other tenant's
        /// last attempts had returned.
        var seconds = 0.0
        var attemptsPerSecond: Double { Double(attempts) / max(seconds, 0.001) }
    }

    /// The quiet tenant's pushes beside the other tenant pushing `rate` times a second over its
    /// 4 connections (each paced evenly, the connections a quarter of a period apart), until
    /// the quiet devices are done.
    static func beside(port: Int, quietTokens: [String], pushes: Int, seed: UInt64, otherTokens: [String], rate: Double) async throws -> Neighbour {
        let perConnection = rate / Double(otherTokens.count)
        let stop = StopSwitch()
        let clock = ContinuousClock()
        let started = clock.now
        return try await withThrowingTaskGroup(of: Neighbour.self) { group in
            for (index, token) in otherTokens.enumerated() {
                let offset = Double(index) / rate
                group.addTask {
                    try await onOwnThread {
                        let connection = try PlainHTTPConnection(port: port)
                        let headers = ["Authorization": "Bearer \(token)", "X-Device-Id": "loop", "Content-Type": "application/json"]
                        var part = Neighbour()
                        while !stop.stopped.load(ordering: .relaxed) {
                            // Paced: the attempts so far are due by now.
                            let due = started + .seconds(offset + Double(part.attempts) / perConnection)
                            if clock.now < due { Thread.sleep(forTimeInterval: (due - clock.now) / .seconds(1)) }
                            let sent = clock.now
                            let (status, _) = try connection.post("/v1/sync/push", headers: headers, body: body(now: Date()))
                            part.attempts += 1
                            if status == 200 { part.taken.append((clock.now - sent) / .milliseconds(1)) } else if status == 429 { part.refused += 1 }
                        }
                        return part
                    }
                }
            }
            group.addTask {
                defer { stop.stopped.store(true, ordering: .relaxed) }
                return Neighbour(quiet: try await quiet(port: port, tokens: quietTokens, pushes: pushes, seed: seed))
            }
            var sum = Neighbour()
            for try await part in group {
                sum.quiet += part.quiet
                sum.taken += part.taken
                sum.refused += part.refused
                sum.attempts += part.attempts
            }
            sum.seconds = (clock.now - started) / .seconds(1)
            return sum
        }
    }

    /// Alone; beside the other tenant pushing at nine tenths of its limit (never refused: a
    /// neighbour within its limit, the comparison that says what the flood's excess costs);
    /// beside it flooding at ten times its limit; alone again; `rounds` times (so that drift of
    /// a busy machine falls on every kind), each phase with new quiet users and the same
    /// schedule of sends (one seed a round). The latencies of each kind pooled; the two alone
    /// phases of a round, pooled apart, give the noise: the same measurement twice.
    static func measure(_ environment: BenchEnvironment, devices: Int, pushes: Int, limit: Int, rounds: Int, log: (String) -> Void) async throws -> Result {
        var result = Result()
        result.limit = limit
        let key = TenantKey.generatedSecret()
        let pool = environment.database.pool
        let noisy = try await TenantStore(pool: pool).create(name: "noisy-\(UUID().uuidString.prefix(8))", key: key).id
        _ = try await TenantLimitsStore(pool: pool).setLimits(tenantID: noisy, [.pushesPerSecond: Int64(limit)])
        var otherTokens: [String] = []
        for index in 0..<4 { otherTokens.append(try await TokenMinter.mint(tenantID: noisy, userID: "loop-\(index)", key: key, ttl: 7200)) }
        let port = environment.server.port
        func quietPhase(_ name: String, seed: UInt64) async throws -> [Double] {
            try await quiet(port: port, tokens: try await quietTokens(environment, devices: devices, round: name), pushes: pushes, seed: seed)
        }
        func besidePhase(_ name: String, seed: UInt64, rate: Double) async throws -> Neighbour {
            let tokens = try await quietTokens(environment, devices: devices, round: name)
            return try await beside(port: port, quietTokens: tokens, pushes: pushes, seed: seed, otherTokens: otherTokens, rate: rate)
        }
        log("noisy tenant: warming up…")
        _ = try await quietPhase("warm", seed: 0)
        var before: [Double] = [], flooded: [Double] = [], withinLimit: [Double] = [], after: [Double] = []
        var floodTaken: [Double] = [], floodRates: [Double] = []
        for round in 0..<rounds {
            let seed = UInt64(round + 1) << 32
            let phase = "noisy tenant, round \(round + 1) of \(rounds)"
            log("\(phase): the quiet tenant alone, \(devices) devices × \(pushes) pushes…")
            before += try await quietPhase("before-\(round)", seed: seed)
            log("\(phase): beside the same tenant within its limit…")
            let calm = try await besidePhase("calm-\(round)", seed: seed, rate: Double(limit) * 0.9)
            withinLimit += calm.quiet
            result.withinLimitTaken += calm.taken.count
            result.withinLimitRefused += calm.refused
            log("\(phase): beside a flood at \(limit * 10) pushes a second…")
            let flood = try await besidePhase("flood-\(round)", seed: seed, rate: Double(limit) * 10)
            flooded += flood.quiet
            result.floodTaken += flood.taken.count
            result.floodRefused += flood.refused
            floodTaken += flood.taken
            floodRates.append(flood.attemptsPerSecond)
            log("\(phase): alone again…")
            after += try await quietPhase("after-\(round)", seed: seed)
        }
        result.quietAlone = Percentiles(before + after)
        result.quietAloneBefore = Percentiles(before)
        result.quietAloneAfter = Percentiles(after)
        result.quietBesideFlood = Percentiles(flooded)
        result.quietBesideWithinLimit = Percentiles(withinLimit)
        result.floodTakenLatency = Percentiles(floodTaken)
        result.floodAttemptsPerSecond = floodRates.reduce(0, +) / Double(max(floodRates.count, 1))
        return result
    }

    static func table(_ result: Result) -> String {
        let alone = result.quietAlone, flooded = result.quietBesideFlood, calm = result.quietBesideWithinLimit
        let before = result.quietAloneBefore, after = result.quietAloneAfter, taken = result.floodTakenLatency
        func ms(_ value: Double?) -> String { String(format: "%.1f", value ?? 0) }
        func ratio(_ a: Double?, _ b: Double?) -> String { String(format: "%.2f", (b ?? 0) / max(a ?? 1, 0.001)) }
        let limit = result.limit
        return """
            | quiet tenant's pushes | count | p50 ms | p99 ms |
            |---|---|---|---|
            | alone (before and after each flood) | \(alone?.count ?? 0) | \(ms(alone?.p50)) | \(ms(alone?.p99)) |
            | beside a tenant flooding at \(String(format: "%.0f", result.floodAttemptsPerSecond)) pushes/s (limit \(limit)/s: \(result.floodTaken) taken, \(result.floodRefused) refused) | \(flooded?.count ?? 0) | \(ms(flooded?.p50)) | \(ms(flooded?.p99)) |
            | beside the same tenant within its limit (\(String(format: "%.0f", Double(limit) * 0.9)) pushes/s: \(result.withinLimitTaken) taken, \(result.withinLimitRefused) refused) | \(calm?.count ?? 0) | \(ms(calm?.p50)) | \(ms(calm?.p99)) |
            | **beside the flood ÷ alone** (target ≤ 1.2) | | \(ratio(alone?.p50, flooded?.p50)) | \(ratio(alone?.p99, flooded?.p99)) |
            | beside the flood ÷ beside it within its limit: what the flood's excess costs | | \(ratio(calm?.p50, flooded?.p50)) | \(ratio(calm?.p99, flooded?.p99)) |
            | the noise: alone after ÷ alone before (\(ms(before?.p50)) / \(ms(before?.p99)) and \(ms(after?.p50)) / \(ms(after?.p99)) ms) | | \(ratio(before?.p50, after?.p50)) | \(ratio(before?.p99, after?.p99)) |
            | (the flood's pushes its limit admitted) | \(taken?.count ?? 0) | \(ms(taken?.p50)) | \(ms(taken?.p99)) |
            """
    }
}
