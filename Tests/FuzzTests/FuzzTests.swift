import Foundation
import FuzzSuite
import TestSupport
import Testing

/// The fuzzer's short form on the debug server: a fixed seed (so a failure repeats), a few
/// hundred operations, one PostgreSQL outage allowed. The long form is `scripts/fuzz`.
/// Bounded by its count of operations, not by time: a busy machine makes it slower, never
/// shorter (with a 100 s cap, a run beside a compile stopped after 56 operations and failed
/// its "more than 50 pushes"). The cap left is a safety net far above a normal run.
@Suite struct FuzzTests {
    @Test func everyInvariantHoldsOverAShortRandomRun() async throws {
        let run = FuzzRun(
            serverBinary: HabitSyncBinary.url, migrationsDirectory: TestPostgres.migrationsDirectory,
            options: .init(seed: 20_261_123, operations: 250, duration: .seconds(1_800), outages: true))
        let report = try await run.run()
        print(report.text)
        #expect(report.passed, "\(report.violations.joined(separator: "\n"))")
        #expect(report.pushes > 50)
        #expect((report.results["applied"] ?? 0) > 50, "the run builds up state")
        #expect((report.results["rejected"] ?? 0) > 10, "the run sends hostile changes")
    }
}
