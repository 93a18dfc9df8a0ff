import FaultSuite
import Foundation
import Testing
import TestSupport

/// The fault suite's short form, on the debug build of the server: real processes killed,
/// signalled and cut off from a real PostgreSQL (each scenario has a cluster of its own).
/// Serialized: each scenario runs a load of its own and two at once would only add noise.
@Suite(.serialized) struct FaultSuiteTests {
    static let suite = FaultSuite(serverBinary: HabitSyncBinary.url, migrationsDirectory: TestPostgres.migrationsDirectory, scale: .quick)

    @Test(arguments: FaultSuite.Scenario.allCases)
    func scenarioHolds(_ scenario: FaultSuite.Scenario) async throws {
        let report = try await Self.suite.run(scenario)
        print(report.text)
        #expect(!report.checks.isEmpty)
        for check in report.checks {
            #expect(check.passed, "\(report.scenario): \(check.claim)")
        }
    }
}
