import Foundation
import ServerHarness
import TestSupport
import Testing

/// `habitsync-bench --quick` on the debug build: the command keeps working end to end (its own
/// cluster, the server as a child process, every workload) and writes every figure. The
/// figures themselves are not judged here: tests never depend on wall-clock time. Two push
/// runs (1 and 4 devices) rather than three: sixteen devices' load would only slow the suites
/// that run beside this one.
@Suite struct BenchCommandTests {
    static var benchBinary: URL { HabitSyncBinary.url.deletingLastPathComponent().appendingPathComponent("habitsync-bench") }

    @Test func theQuickRunMeasuresEveryWorkloadAndWritesTheJSON() async throws {
        let directory = try makeTemporaryDirectory("habitsync-bench-test")
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("latest.json")
        let process = Process()
        process.executableURL = Self.benchBinary
        process.arguments = [
            "--server-binary", HabitSyncBinary.url.path, "--migrations-dir", TestPostgres.migrationsDirectory.path,
            "--output", output.path, "--quick", "--devices", "1", "4",
        ]
        let table = directory.appendingPathComponent("table.txt")
        #expect(FileManager.default.createFile(atPath: table.path, contents: nil))
        process.standardOutput = try FileHandle(forWritingTo: table)
        // Kept for the failure message: what the bench said last (its BenchError, the server's log).
        let log = directory.appendingPathComponent("stderr.txt")
        #expect(FileManager.default.createFile(atPath: log.path, contents: nil))
        process.standardError = try FileHandle(forWritingTo: log)
        // From a folder without migrations/: the server child must be told where they are.
        process.currentDirectoryURL = directory
        try process.run()
        let termination = await process.exited()
        #expect(termination.status == 0, "\((try? String(contentsOf: log, encoding: .utf8))?.split(separator: "\n").suffix(15).joined(separator: "\n") ?? "")")

        let printed = try String(contentsOf: table, encoding: .utf8)
        #expect(printed.contains("| measurement | end to end | raw ceiling | ratio | target |"))
        let results = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: output)) as? [String: Any])
        let raw = try #require(results["rawUpsertRecordsPerSecond"] as? [String: Double])
        #expect(Set(raw.keys) == ["1", "4"] && raw.values.allSatisfy { $0 > 0 })
        let push = try #require(results["push"] as? [[String: Any]])
        #expect(push.compactMap { $0["devices"] as? Int } == [1, 4])
        for run in push {
            #expect((run["recordsPerSecond"] as? Double ?? 0) > 0)
            let latency = run["latencyMilliseconds"] as? [String: Any] ?? [:]
            #expect((latency["count"] as? Int ?? 0) > 0 && (latency["p50"] as? Double ?? 0) > 0)
        }
        #expect(results["initialSyncRecords"] as? Int == 5_000, "the quick run seeds 5,000 records and must pull every one")
        #expect((results["initialSyncRecordsPerSecond"] as? Double ?? 0) > 0 && (results["rawPullRecordsPerSecond"] as? Double ?? 0) > 0)
        for key in ["incrementalPullMilliseconds", "pullLatencySmallMilliseconds", "pullLatencyLargeMilliseconds"] {
            let latency = results[key] as? [String: Any] ?? [:]
            #expect((latency["count"] as? Int ?? 0) > 0, "\(key)")
        }
        #expect((results["serverPeakRSSMiB"] as? Double ?? 0) > 0)
    }

    /// Runs the bench with `arguments` (and the debug server) in a folder of its own; its
    /// exit status, what it printed, and its log.
    static func runBench(_ arguments: [String]) async throws -> (status: Int32, printed: String, log: String) {
        let directory = try makeTemporaryDirectory("habitsync-bench-run")
        defer { try? FileManager.default.removeItem(at: directory) }
        let process = Process()
        process.executableURL = benchBinary
        process.arguments = ["--server-binary", HabitSyncBinary.url.path, "--migrations-dir", TestPostgres.migrationsDirectory.path] + arguments
        process.currentDirectoryURL = directory
        let table = directory.appendingPathComponent("table.txt"), log = directory.appendingPathComponent("stderr.txt")
        #expect(FileManager.default.createFile(atPath: table.path, contents: nil))
        #expect(FileManager.default.createFile(atPath: log.path, contents: nil))
        process.standardOutput = try FileHandle(forWritingTo: table)
        process.standardError = try FileHandle(forWritingTo: log)
        try process.run()
        let termination = await process.exited()
        return (termination.status, try String(contentsOf: table, encoding: .utf8), (try? String(contentsOf: log, encoding: .utf8)) ?? "")
    }

    @Test func theHostileMemoryRunReportsEveryPeak() async throws {
        let (status, printed, log) = try await Self.runBench(["--hostile-memory", "--quick"])
        #expect(status == 0, "\(log)")
        for row in ["| idle", "| after 16 concurrent 8 MiB bodies of zeros", "| after 16 concurrent 8 MiB batches"] {
            #expect(printed.contains(row), "\(printed)")
        }
        #expect(printed.contains("valid 200×16"), "every valid batch is stored in the end: \(printed)")
    }

    /// `--realtime --quick`: two replicas, streams over both, every push's event found on the
    /// other replica (the run fails otherwise), and every row printed.
    @Test func theRealtimeRunTimesEventsAcrossReplicas() async throws {
        let (status, printed, log) = try await Self.runBench(["--realtime", "--quick"])
        #expect(status == 0, "\(log)")
        for row in [
            "| push ack on replica A → event on replica B, p50 (40 streams over two replicas, 20 pushes)", "| replica B RSS with 100 idle streams",
            "| push, 16 devices, 40 streams open",
        ] {
            #expect(printed.contains(row), "\(printed)")
        }
    }

    /// `--account --quick`: both exports streamed and answered 200 (the run fails otherwise),
    /// the erasure answered, every row printed.
    @Test func theAccountRunExportsAndErases() async throws {
        let (status, printed, log) = try await Self.runBench(["--account", "--quick"])
        #expect(status == 0, "\(log)")
        for row in ["| export, small (1000 usage events)", "| export, large (20000 usage events)", "| DELETE /v1/account of the large one | "] {
            #expect(printed.contains(row), "\(printed)")
        }
        #expect(printed.contains("20001 rows"), "every row of the large account erased: \(printed)")
    }

    /// `--check-in --prices --quick`: the check-in with every guarantee and without each (the
    /// bench checks each is back on before the next run, and fails otherwise), every row printed.
    @Test func thePriceRunMeasuresTheCheckInWithoutEachGuarantee() async throws {
        let (status, printed, log) = try await Self.runBench(["--check-in", "--prices", "--quick", "--price-rounds", "1"])
        #expect(status == 0, "\(log)")
        for row in [
            "| (every guarantee kept) |", "| record digests (triggers) |", "| streak month summaries (triggers) |", "| usage streak's exit runs (triggers) |",
            "| the erased-account check after the lock |", "| all four |",
        ] {
            #expect(printed.contains(row), "\(printed)")
        }
        // The check-in's own row, against issue 63's target (its CPU over the raw transaction's
        // is printed when the raw run's CPU was measurable, which a quick run's seldom is).
        #expect(printed.contains("| ≥ 0.3, CPU ≤ 5× raw (issue 63) |"), "\(printed)")
    }

    /// `--noisy-tenant --quick`: the quiet tenant's 4 devices push 20 times in each phase and
    /// every push is stored (the run fails otherwise), beside the other tenant within its limit
    /// and beside its flood; every row printed with its count.
    @Test func theNoisyTenantRunMeasuresEachPhase() async throws {
        let (status, printed, log) = try await Self.runBench(["--noisy-tenant", "--quick"])
        #expect(status == 0, "\(log)")
        for row in [
            "| alone (before and after each flood) | 160 |", "| beside a tenant flooding at ", "| beside the same tenant within its limit (9 pushes/s: ",
            "| **beside the flood ÷ alone** (target ≤ 1.2) |", "| the noise: alone after ÷ alone before", "| (the flood's pushes its limit admitted) |",
        ] {
            #expect(printed.contains(row), "\(printed)")
        }
        let quietRows = printed.split(separator: "\n").filter { $0.hasPrefix("| beside a tenant") || $0.hasPrefix("| beside the same") }
        #expect(quietRows.count == 2 && quietRows.allSatisfy { $0.contains(" | 80 | ") }, "\(printed)")
    }
}
