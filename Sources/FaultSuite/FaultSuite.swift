import Foundation

/// The fault suite: each scenario in a world of its own (its own PostgreSQL cluster, or its own
/// tenant on a given database, and server processes), run one after another, each returning
/// what it checked.
public struct FaultSuite: Sendable {
    public enum Scenario: String, CaseIterable, Sendable {
        case killDuringPush = "kill"
        case databaseOutage = "outage"
        case drainOnSIGTERM = "sigterm"
        case twoReplicas = "replicas"

        /// Needs a cluster of the run's own.
        public var stopsPostgreSQL: Bool { self == .databaseOutage }
    }

    public let serverBinary: URL
    public let migrationsDirectory: URL
    public let scale: FaultScale
    /// Every server's requests through PgBouncer in transaction mode (deploy/README.md).
    public let throughPgBouncer: Bool
    /// A database to run on (each scenario a tenant of its own there; a distributed one for
    /// Citus); nil: a cluster of each scenario's own.
    public let databaseURL: String?
    /// Once a scenario's servers are up, wait to be interrupted instead of running it: to look
    /// at them, and for `InterruptTests`, which must find them running however busy the machine.
    public let holdWhenServing: Bool

    public init(
        serverBinary: URL, migrationsDirectory: URL, scale: FaultScale, throughPgBouncer: Bool = false, databaseURL: String? = nil,
        holdWhenServing: Bool = false
    ) {
        self.holdWhenServing = holdWhenServing
        self.serverBinary = serverBinary
        self.migrationsDirectory = migrationsDirectory
        self.scale = scale
        self.throughPgBouncer = throughPgBouncer
        self.databaseURL = databaseURL
    }

    /// Runs one scenario. Its folder (cluster, server logs) is removed unless it failed.
    public func run(_ scenario: Scenario) async throws -> FaultReport {
        let environment = try await FaultEnvironment(
            name: scenario.rawValue, serverBinary: serverBinary, migrationsDirectory: migrationsDirectory,
            throughPgBouncer: throughPgBouncer, databaseURL: databaseURL)
        environment.holdsWhenServing = holdWhenServing
        do {
            let report: FaultReport
            switch scenario {
            case .killDuringPush: report = try await KillDuringPush.run(environment, scale: scale)
            case .databaseOutage: report = try await DatabaseOutage.run(environment, scale: scale)
            case .drainOnSIGTERM: report = try await DrainOnSIGTERM.run(environment, scale: scale)
            case .twoReplicas: report = try await TwoReplicas.run(environment, scale: scale)
            }
            var kept = report
            if !report.passed { kept.note("logs kept in \(environment.workDirectory.path)") }
            await environment.close(keep: !report.passed)
            return kept
        } catch {
            await environment.close(keep: true)
            throw FaultSuiteError(scenario: scenario, underlying: "\(error)", folder: environment.workDirectory.path)
        }
    }
}

public struct FaultSuiteError: Error, CustomStringConvertible {
    public let scenario: FaultSuite.Scenario
    public let underlying: String
    public let folder: String
    public var description: String { "fault scenario '\(scenario.rawValue)' could not run: \(underlying) (logs in \(folder))" }
}
