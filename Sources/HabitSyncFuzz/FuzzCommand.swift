import ArgumentParser
import Foundation
import FuzzSuite
import ServerHarness

/// `habitsync-fuzz`: random hostile batches, queries and lifecycle operations against a real
/// server process and a PostgreSQL cluster of its own, with invariants after every step.
@main
struct FuzzCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "habitsync-fuzz", abstract: "Fuzz a real habitsync-server end to end; exit 1 when an invariant breaks.")

    @Option(name: .customLong("server-binary"), help: "The habitsync-server binary to run.")
    var serverBinary = ".build/release/habitsync-server"
    @Option(name: .customLong("migrations-dir")) var migrationsDirectory = "migrations"
    @Option(help: "Random seed (the same seed repeats the same operations).") var seed: UInt64 = UInt64(Date().timeIntervalSince1970)
    @Option(help: "Stop after this many operations.") var operations = Int.max
    @Option(help: "Stop after this many minutes.") var minutes = 30.0
    @Flag(name: .customLong("no-outages"), help: "Never stop PostgreSQL during the run.") var noOutages = false

    func run() async throws {
        guard minutes > 0, minutes <= 7 * 24 * 60, operations > 0 else { throw ValidationError("--minutes must be 0–10080 and --operations positive") }
        let interrupts = HarnessCleanup.handleInterrupts()
        defer { withExtendedLifetime(interrupts) {} }
        try await HarnessCleanup.shared.run {
            let run = FuzzRun(
                serverBinary: URL(fileURLWithPath: serverBinary), migrationsDirectory: URL(fileURLWithPath: migrationsDirectory),
                options: .init(seed: seed, operations: operations, duration: .milliseconds(Int64(minutes * 60_000)), outages: !noOutages))
            let report = try await run.run()
            print(report.text)
            if !report.passed { throw ExitCode(1) }
        }
    }
}
