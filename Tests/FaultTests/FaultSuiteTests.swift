import FaultSuite
import Foundation
import LibPQClient
import TestSupport
import Testing

/// The fault suite's short form, on the debug build of the server: real processes killed,
/// signalled and cut off from a real PostgreSQL (each scenario has a cluster of its own).
/// Serialized: each scenario runs a load of its own and two at once would only add noise.
@Suite(.serialized) struct FaultSuiteTests {
    static let suite = FaultSuite(serverBinary: HabitSyncBinary.url, migrationsDirectory: TestPostgres.migrationsDirectory, scale: .quick)

    static let pooled = FaultSuite(
        serverBinary: HabitSyncBinary.url, migrationsDirectory: TestPostgres.migrationsDirectory, scale: .quick,
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

    /// On a given database (`--database-url`, as `scripts/test-citus` runs it on a distributed
    /// one): the scenario gets a tenant of its own there and holds the same. Here the database
    /// is the suite's plain PostgreSQL, so CI runs the path the Citus target depends on.
    @Test func aScenarioHoldsOnAGivenDatabase() async throws {
        let database = try await TestPostgres.shared.migratedDatabase()
        let given = FaultSuite(
            serverBinary: HabitSyncBinary.url, migrationsDirectory: TestPostgres.migrationsDirectory, scale: .quick,
            databaseURL: database.connectionString)
        try Self.check(try await given.run(.killDuringPush))
        let tenants = try await database.withPool(size: 1) { pool in
            try await pool.withConnection { try await $0.query("SELECT count(*)::int8 AS n FROM tenants").single().decode("n", as: Int64.self) }
        }
        #expect(tenants == 1, "the scenario's own tenant")
    }

    static func check(_ report: FaultReport) throws {
        print(report.text)
        #expect(!report.checks.isEmpty)
        for check in report.checks {
            #expect(check.passed, "\(report.scenario): \(check.claim)")
        }
    }
}
