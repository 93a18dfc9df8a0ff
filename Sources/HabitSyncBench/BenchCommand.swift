import ArgumentParser
import Foundation
import HabitSyncStore
import ServerHarness

/// `habitsync-bench`: one run, side by side, of the raw PostgreSQL ceiling through our libpq
/// client and the server end to end; prints a table of ratios and writes the numbers as JSON.
@main
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "habitsync-bench", abstract: "Measure push and pull against the raw PostgreSQL ceiling (BENCHMARKS.md).")

    @Option(name: .customLong("database-url"), help: "Use this database instead of a cluster of the benchmark's own.")
    var databaseURL: String?
    @Option(name: .customLong("server-binary"), help: "A release build of habitsync-server.")
    var serverBinary = ".build/release/habitsync-server"
    @Option(name: .customLong("migrations-dir")) var migrationsDirectory = "migrations"
    @Option(help: "Where the JSON results go.") var output = "benchmark-results/latest.json"
    @Flag(help: "Small sizes, for a smoke run (figures are not meaningful).") var quick = false
    @Option(parsing: .upToNextOption, help: "How many concurrent devices each push run has.") var devices: [Int] = [1, 4, 16]
    @Flag(name: .customLong("hostile-memory"), help: "Measure only the server's peak RSS under 16 concurrent maximum-size pushes.") var hostileMemory = false
    @Flag(name: .customLong("push-only"), help: "Measure only the raw upsert ceiling and the push runs.") var pushOnly = false
    @Flag(name: .customLong("pull-only"), help: "Measure only the pulls: initial sync, incremental pull, pull at scale.") var pullOnly = false
    @Flag(name: .customLong("realtime"), help: "Measure only the event streams: latency across two replicas, memory with idle streams, push throughput beside them.") var realtimeOnly = false
    @Flag(name: .customLong("account"), help: "Measure only account export (time, server peak memory: small against large) and erasure.") var accountOnly = false
    @Flag(name: .customLong("first-sync"), help: "Measure only a new device's first sync of a ten-year user: until the main screen is held, and the whole history.")
    var firstSyncOnly = false
    @Flag(
        name: .customLong("noisy-tenant"),
        help: "Measure only a quiet tenant's push latency alone and beside another tenant flooding at ten times its pushes-a-second limit.")
    var noisyTenantOnly = false
    @Flag(name: .customLong("check-in"), help: "Measure only the app-open check-in (a completion and two usage events) against its raw ceiling, with CPU per check-in.") var checkInOnly = false
    @Option(name: .customLong("check-in-connections"), help: "With --check-in: this many connections (16 by default; 1 shows each statement's own cost in pg_stat_statements).")
    var checkInConnections = 16
    @Option(name: .customLong("check-ins"), help: "With --check-in: check-ins per connection (150 by default).") var checkInsPerConnection = 150
    @Option(
        name: .customLong("check-in-rounds"),
        help: "With --check-in: measure this many times on one server, each with new users (1 by default); the later rounds run on connections whose statements are prepared and planned.")
    var checkInRounds = 1
    @Flag(
        name: .customLong("first-of-day"),
        help: "With --check-in: every check-in is a user's first completion of the day (a user each), which moves the streak and recomputes.")
    var checkInFirstOfDay = false
    @Flag(
        name: .customLong("prices"),
        help: "With --check-in: measure it again without each guarantee's database work (digests, streak summaries, exit runs, erasure check), then without all: each one's price.")
    var checkInPrices = false
    @Flag(
        name: .customLong("tracing-cost"),
        help:
            "With --check-in: measure it on this server (tracing off) and on a replica on the same database that traces every request (OTLP/HTTP to a sink), alternately; prints each round and the ratio of their medians."
    )
    var tracingCost = false
    @Flag(
        name: .customLong("webhook-cost"),
        help:
            "With --check-in: measure it with the tenant holding no webhook endpoint and with one hearing every push (delivered to a sink), alternately; prints each round and the ratio of their medians."
    )
    var webhookCost = false
    @Option(name: .customLong("price-rounds"), help: "With --prices: rounds of with and without each (3 by default); each row is its median.")
    var priceRounds = 3
    @Flag(name: .customLong("history-scale"), help: "Measure only push and first-pull-of-a-day latency against a week, 5 and 10 years of history.") var historyScaleOnly = false
    @Option(name: .customLong("history-runs"), help: "With --history-scale: this many fresh databases in turn, every other one seeded without ANALYZE.") var historyRuns = 1

    struct Results: Codable {
        var date = ISO8601DateFormatter().string(from: Date())
        var commit = ""
        var rawUpsertRecordsPerSecond: [String: Double] = [:]
        var rawPullRecordsPerSecond = 0.0
        var push: [Workloads.PushResult] = []
        var initialSyncRecords = 0
        var initialSyncRecordsPerSecond = 0.0
        var incrementalPullMilliseconds: Percentiles?
        var pullLatencySmallMilliseconds: Percentiles?
        var pullLatencyLargeMilliseconds: Percentiles?
        var smallRows = 0
        var largeRows = 0
        var serverPeakRSSMiB = 0.0
        var historyScale: [HistoryScale.Row] = []
        var checkIn: CheckInBench.Result?
    }

    func run() async throws {
        let interrupts = HarnessCleanup.handleInterrupts()
        defer { withExtendedLifetime(interrupts) {} }
        try await HarnessCleanup.shared.run { try await measure() }
    }

    func measure() async throws {
        let batches = quick ? 5 : 40
        let pullRows = quick ? 5_000 : 100_000
        let (small, large) = quick ? (1_000, 20_000) : (10_000, 1_000_000)
        let environment = try await BenchEnvironment(databaseURL: databaseURL, serverBinary: serverBinary, migrationsDirectory: migrationsDirectory)
        if hostileMemory {
            log("16 concurrent maximum-size pushes…")
            let memory: HostileMemory.Result
            do { memory = try await HostileMemory.measure(environment, bodyBytes: quick ? 1 << 20 : 8 << 20) } catch {
                await environment.stop()
                throw error
            }
            await environment.stop()
            print(
                """
                | server peak RSS, MiB | value | target |
                |---|---|---|
                | idle (after one small push) | \(String(format: "%.1f", memory.idlePeakMiB)) | |
                | after 16 concurrent 8 MiB bodies of zeros (refused by the parser's limits) | \(String(format: "%.1f", memory.afterHugeTreesPeakMiB)) | < 300 |
                | after 16 concurrent 8 MiB batches of 1000 valid changes | \(String(format: "%.1f", memory.afterLargeValidBatchesPeakMiB)) | < 300 |
                statuses: \(memory.statuses.sorted { $0.key < $1.key }.map { "\($0.key)×\($0.value)" }.joined(separator: ", "))
                """)
            return
        }
        if realtimeOnly {
            let result: RealtimeBench.Result
            do {
                result = try await RealtimeBench.measure(
                    environment, streams: quick ? 40 : 1_000, idleStreams: quick ? 100 : 5_000,
                    samples: quick ? 20 : 400, batches: quick ? 3 : 20, log: log)
            } catch {
                await environment.stop()
                throw error
            }
            await environment.stop()
            print(RealtimeBench.table(result))
            return
        }
        if accountOnly {
            let result: AccountBench.Result
            do { result = try await AccountBench.measure(environment, small: quick ? 1_000 : 10_000, large: quick ? 20_000 : 500_000, log: log) } catch {
                await environment.stop()
                throw error
            }
            await environment.stop()
            print(AccountBench.table(result))
            return
        }
        if noisyTenantOnly {
            let result: NoisyTenantBench.Result
            do { result = try await NoisyTenantBench.measure(environment, devices: 4, pushes: quick ? 20 : 150, limit: 10, rounds: quick ? 1 : 4, log: log) } catch {
                await environment.stop()
                throw error
            }
            await environment.stop()
            print(NoisyTenantBench.table(result))
            return
        }
        if firstSyncOnly {
            let result: FirstSyncBench.Result
            do { result = try await FirstSyncBench.measure(environment, rounds: quick ? 1 : 5, log: log) } catch {
                await environment.stop()
                throw error
            }
            await environment.stop()
            print(FirstSyncBench.table(result))
            return
        }
        if checkInOnly, webhookCost {
            let result: WebhookCost.Result
            do { result = try await WebhookCost.measure(environment, rounds: quick ? 1 : priceRounds, log: log) { try await checkIn(environment, rawCeiling: false) } } catch {
                await environment.stop()
                throw error
            }
            await environment.stop()
            print(WebhookCost.table(result))
            return
        }
        if checkInOnly, tracingCost {
            let result: TracingCost.Result
            do { result = try await TracingCost.measure(environment, rounds: quick ? 1 : priceRounds, log: log) { try await checkIn(environment, rawCeiling: false, on: $0) } } catch {
                await environment.stop()
                throw error
            }
            await environment.stop()
            print(TracingCost.table(result))
            return
        }
        if checkInOnly {
            let result: CheckInBench.Result
            var rounds: [CheckInBench.Result] = []  // after the first
            var prices: [GuaranteePrice.Row] = []
            do {
                result = try await checkIn(environment)
                while rounds.count + 1 < checkInRounds { rounds.append(try await checkIn(environment, rawCeiling: false)) }
                if checkInPrices {
                    prices = try await GuaranteePrice.rows(rounds: priceRounds, pool: environment.database.pool, log: log) {
                        try await checkIn(environment, rawCeiling: false)
                    }
                }
            } catch {
                await environment.stop()
                throw error
            }
            await environment.stop()
            print(CheckInBench.table(result))
            for (index, round) in rounds.enumerated() { print("\nround \(index + 2) of \(checkInRounds), on the same server:\n" + CheckInBench.table(round)) }
            if checkInPrices { print("\n" + GuaranteePrice.table(prices)) }
            return
        }
        let histories = quick ? [("a week", 7), ("1 year", 365)] : [("a week", 7), ("5 years", 5 * 365), ("10 years", 10 * 365)]
        if historyScaleOnly, historyRuns > 1 {
            await environment.stop()
            var runs: [HistoryScale.Run] = []
            for run in 0..<historyRuns {
                log("history scale, fresh database \(run + 1) of \(historyRuns)…")
                let fresh = try await BenchEnvironment(databaseURL: databaseURL, serverBinary: serverBinary, migrationsDirectory: migrationsDirectory)
                let analysed = run % 2 == 1
                do {
                    let rows = try await HistoryScale.measure(fresh, rounds: quick ? 5 : 40, histories: histories, analyse: analysed)
                    runs.append(HistoryScale.Run(analysed: analysed, rows: rows))
                } catch {
                    await fresh.stop()
                    throw error
                }
                await fresh.stop()
                print(HistoryScale.table(runs[run].rows))
            }
            print(HistoryScale.runsTable(runs))
            return
        }
        if historyScaleOnly {
            log("history scale…")
            let rows: [HistoryScale.Row]
            do { rows = try await HistoryScale.measure(environment, rounds: quick ? 5 : 40, histories: histories) } catch {
                await environment.stop()
                throw error
            }
            await environment.stop()
            print(HistoryScale.table(rows))
            return
        }
        var results = Results()
        results.commit = (try? String(contentsOfFile: ".git/HEAD", encoding: .utf8)).map(Self.resolveCommit) ?? ""
        do {
            log("raw upsert ceiling…")
            for workers in pullOnly ? [] : devices {
                results.rawUpsertRecordsPerSecond[String(workers)] = try await Workloads.rawUpsert(environment.database.pool, workers: workers, batches: batches, size: 100)
            }
            for devices in pullOnly ? [] : self.devices {
                log("push with \(devices) device(s)…")
                results.push.append(try await Workloads.push(environment, devices: devices, batches: batches))
            }
            if !pullOnly { results.checkIn = try await checkIn(environment) }
            if pushOnly {
                await environment.stop()
                print(Self.table(results))
                return
            }
            log("seeding \(pullRows) rows for the pull…")
            try await Workloads.seedUsageEvents(environment.database.pool, tenant: environment.database.tenant, user: "pull-user", count: pullRows)
            results.rawPullRecordsPerSecond = try await Workloads.rawPull(environment.database.pool, tenant: environment.database.tenant, user: "pull-user")
            let pusher = try await environment.client(user: "pull-user", device: "puller")
            let puller = try await environment.puller(user: "pull-user")
            let sync = try Workloads.initialSync(puller)
            (results.initialSyncRecords, results.initialSyncRecordsPerSecond) = sync
            var incremental = Workloads.IncrementalPuller(pusher, puller, from: PullCursor(version: Int64(pullRows)).text)
            results.incrementalPullMilliseconds = try await Workloads.incrementalPull(&incremental, rounds: 15)

            log("seeding \(small) and \(large) rows for the scale comparison…")
            for (user, count) in [("scale-small", small), ("scale-large", large)] {
                try await Workloads.seedUsageEvents(environment.database.pool, tenant: environment.database.tenant, user: user, count: count)
            }
            var smallUser = Workloads.IncrementalPuller(
                try await environment.client(user: "scale-small", device: "scale"), try await environment.puller(user: "scale-small"), from: PullCursor(version: Int64(small)).text)
            var largeUser = Workloads.IncrementalPuller(
                try await environment.client(user: "scale-large", device: "scale"), try await environment.puller(user: "scale-large"), from: PullCursor(version: Int64(large)).text)
            (results.pullLatencySmallMilliseconds, results.pullLatencyLargeMilliseconds) =
                try await Workloads.incrementalPullSideBySide(&smallUser, &largeUser, rounds: 41)
            results.smallRows = small
            results.largeRows = large
            if pullOnly {
                await environment.stop()
                print(Self.table(results))
                return
            }
            log("history scale…")
            results.historyScale = try await HistoryScale.measure(environment, rounds: quick ? 5 : 40, histories: histories)
            results.serverPeakRSSMiB = environment.server.peakRSSMiB()
        } catch {
            await environment.stop()
            throw error
        }
        await environment.stop()
        print(Self.table(results))
        print()
        print(HistoryScale.table(results.historyScale))
        try FileManager.default.createDirectory(at: URL(fileURLWithPath: output).deletingLastPathComponent(), withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(results).write(to: URL(fileURLWithPath: output))
        log("results written to \(output)")
    }

    /// The check-in row: 16 connections over 256 users (by default).
    func checkIn(_ environment: BenchEnvironment, rawCeiling: Bool = true, on replica: ServerProcess? = nil) async throws -> CheckInBench.Result {
        try await CheckInBench.measure(
            environment, connections: checkInConnections, users: quick ? 32 : 256, checkInsPerConnection: quick ? 10 : checkInsPerConnection,
            firstOfDay: checkInFirstOfDay, rawCeiling: rawCeiling, on: replica, log: log)
    }

    func log(_ message: String) { FileHandle.standardError.write(Data("bench: \(message)\n".utf8)) }

    static func resolveCommit(_ head: String) -> String {
        let trimmed = head.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.hasPrefix("ref: ") else { return trimmed }
        return (try? String(contentsOfFile: ".git/" + trimmed.dropFirst(5), encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? trimmed
    }

    static func table(_ r: Results) -> String {
        func f(_ value: Double) -> String { String(format: "%.0f", value) }
        func ms(_ value: Double) -> String { String(format: "%.1f", value) }
        func cpu(_ push: Workloads.PushResult) -> String {
            guard let server = push.serverCPUPerPush, let postgres = push.postgresCPUPerPush else { return "" }
            return String(format: "; CPU per 100-change push: server %.2f + PostgreSQL %.2f = %.2f ms", server, postgres, server + postgres)
        }
        var lines = ["| measurement | end to end | raw ceiling | ratio | target |", "|---|---|---|---|---|"]
        for push in r.push {
            let raw = r.rawUpsertRecordsPerSecond[String(push.devices)] ?? 0
            lines.append(
                "| push, \(push.devices) device(s), records/s (p50/p95/p99 \(ms(push.latencyMilliseconds.p50))/\(ms(push.latencyMilliseconds.p95))/\(ms(push.latencyMilliseconds.p99)) ms\(cpu(push))) | \(f(push.recordsPerSecond)) | \(f(raw)) | \(String(format: "%.2f", push.recordsPerSecond / max(raw, 1))) | \(push.devices == 16 ? "≥ 0.3, p99 ≤ 150 ms" : "") |"
            )
        }
        if r.initialSyncRecords > 0 {
            lines.append(
                "| initial sync of \(r.initialSyncRecords) records, records/s | \(f(r.initialSyncRecordsPerSecond)) | \(f(r.rawPullRecordsPerSecond)) | \(String(format: "%.2f", r.initialSyncRecordsPerSecond / max(r.rawPullRecordsPerSecond, 1))) | ≥ 0.6 |"
            )
        }
        if let incremental = r.incrementalPullMilliseconds {
            lines.append("| incremental pull of 100 changes, p50 ms | \(ms(incremental.p50)) | | | |")
        }
        if let small = r.pullLatencySmallMilliseconds, let large = r.pullLatencyLargeMilliseconds {
            lines.append(
                "| pull of 100 new changes, p50 ms: \(r.largeRows) vs \(r.smallRows) rows stored | \(ms(large.p50)) vs \(ms(small.p50)) | | \(String(format: "%.2f", large.p50 / max(small.p50, 0.001))) | ≤ 1.3 |"
            )
        }
        if let checkIn = r.checkIn { lines.append(CheckInBench.row(checkIn)) }
        lines.append("| server peak RSS, MiB | \(String(format: "%.1f", r.serverPeakRSSMiB)) | | | ≤ 150 |")
        return lines.joined(separator: "\n")
    }
}
