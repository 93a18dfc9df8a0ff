import ArgumentParser
import FaultSuite
import Foundation
import ServerHarness

/// `habitsync-faults`: kills, stops and signals real server processes and a real PostgreSQL
/// under load, and prints what it checked with the counts (acknowledged, found, lost).
@main
struct FaultsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "habitsync-faults", abstract: "Run the fault suite (kill -9, PostgreSQL outage, SIGTERM, two replicas) against real processes.")

    @Option(name: .customLong("server-binary"), help: "The habitsync-server binary to run.")
    var serverBinary = ".build/release/habitsync-server"
    @Option(name: .customLong("migrations-dir")) var migrationsDirectory = "migrations"
    @Option(name: .customLong("scenario"), help: "Run only these: \(FaultSuite.Scenario.allCases.map(\.rawValue).joined(separator: ", ")).")
    var scenarios: [String] = []
    @Flag(help: "The short form CI runs (fewer devices and batches).") var quick = false
    @Flag(name: .customLong("pgbouncer"), help: "Every server's requests through PgBouncer in transaction mode (deploy/README.md).") var throughPgBouncer = false
    @Option(
        name: .customLong("database-url"),
        help: """
            Run on this migrated database (a distributed one, for Citus) instead of a cluster of each scenario's own;         each scenario gets a tenant of its own there. The outage scenario stops PostgreSQL and is left out.
            """)
    var databaseURL: String?
    @Flag(
        name: .customLong("hold-when-serving"),
        help: "Once a scenario's servers are up, wait for Ctrl-C instead of running it (the replicas scenario).")
    var holdWhenServing = false

    func run() async throws {
        let interrupts = HarnessCleanup.handleInterrupts()
        defer { withExtendedLifetime(interrupts) {} }
        try await HarnessCleanup.shared.run { try await runScenarios() }
    }

    func runScenarios() async throws {
        let possible = FaultSuite.Scenario.allCases.filter { databaseURL == nil || !$0.stopsPostgreSQL }
        let selected =
            try scenarios.isEmpty
            ? possible
            : scenarios.map { name in
                guard let scenario = FaultSuite.Scenario(rawValue: name) else { throw ValidationError("unknown scenario '\(name)'") }
                guard possible.contains(scenario) else { throw ValidationError("the \(name) scenario stops PostgreSQL: it needs a cluster of its own, not --database-url") }
                return scenario
            }
        if databaseURL != nil, scenarios.isEmpty { print("fault suite: on --database-url, without the scenarios that stop PostgreSQL") }
        let suite = FaultSuite(
            serverBinary: URL(fileURLWithPath: serverBinary), migrationsDirectory: URL(fileURLWithPath: migrationsDirectory),
            scale: quick ? .quick : .full, throughPgBouncer: throughPgBouncer, databaseURL: databaseURL, holdWhenServing: holdWhenServing)
        var failed = 0
        for scenario in selected {
            let report = try await suite.run(scenario)
            print(report.text)
            if !report.passed { failed += 1 }
        }
        print(failed == 0 ? "fault suite: all \(selected.count) scenarios passed" : "fault suite: \(failed) of \(selected.count) scenarios FAILED")
        if failed > 0 { throw ExitCode(1) }
    }
}
