import FaultSuite
import Foundation
import Testing
import TestSupport

/// The fault suite's short form, on the debug build of the server: real processes killed,
/// signalled and cut off from a real PostgreSQL (each scenario has a cluster of its own).
/// Serialized: each scenario runs a load of its own and two at once would only add noise.
@Suite(.serialized) struct FaultSuiteTests {
    static let suite = FaultSuite(serverBinary: HabitSyncBinary.url, migrationsDirectory: TestPostgres.migrationsDirectory, scale: .quick)

    static let pooled = FaultSuite(serverBinary: HabitSyncBinary.url, migrationsDirectory: TestPostgres.migrationsDirectory, scale: .quick,
                                   throughPgBouncer: true)

    @Test(arguments: FaultSuite.Scenario.allCases)
    func scenarioHolds(_ scenario: FaultSuite.Scenario) async throws {
        try Self.check(try await Self.suite.run(scenario))
    }

    /// The same, with the servers' requests through PgBouncer in transaction mode: a server
    /// killed mid-push and PostgreSQL restarted behind the pooler.
    @Test(arguments: [FaultSuite.Scenario.killDuringPush, .databaseOutage])
    func scenarioHoldsThroughPgBouncer(_ scenario: FaultSuite.Scenario) async throws {
        try Self.check(try await Self.pooled.run(scenario))
    }

    static func check(_ report: FaultReport) throws {
        print(report.text)
        #expect(!report.checks.isEmpty)
        for check in report.checks {
            #expect(check.passed, "\(report.scenario): \(check.claim)")
        }
    }
}
