import ArgumentParser
import Foundation
import HabitSyncServer
import LibPQClient
import Logging
import Migrations

/// `habitsync-server migrate status | up | validate | baseline`.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Inspect and apply the schema migrations.",
        subcommands: [Status.self, Up.self, Validate.self, Baseline.self])

    /// Runs `body` with a migration runner on a one-connection pool of the login role.
    static func withRunner<T>(_ common: CommonOptions, _ body: (MigrationRunner) async throws -> T) async throws -> T {
        let logger = try common.makeQuietLogger()
        let directory = try common.migrationDirectory()
        let options = try common.migrationOptions()
        return try await common.withOwnerPool(logger: logger, applicationName: "habitsync-server migrate") { pool in
            try await body(MigrationRunner(pool: pool, directory: directory, options: options, logger: logger))
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List every migration: version, name, state (applied, pending, modified, missing file, unknown to this binary), applied at, checksum.")

        @OptionGroup var common: CommonOptions
        @Flag(help: "Print one JSON object instead of a table.") var json = false

        func run() async throws {
            let status = try await MigrateCommand.withRunner(common) { try await $0.status() }
            if json {
                let entries: [[String: Any]] = status.entries.map { entry in
                    var object: [String: Any] = ["version": entry.version, "name": entry.name, "state": entry.state.rawValue]
                    if let checksum = entry.applied?.checksum ?? entry.fileChecksum { object["checksum"] = checksum }
                    if let applied = entry.applied {
                        object["appliedAt"] = ISO8601DateFormatter().string(from: applied.appliedAt)
                        object["appliedBy"] = applied.appliedBy
                        object["method"] = applied.method
                        object["durationMs"] = applied.durationMilliseconds
                    }
                    return object
                }
                let object: [String: Any] = [
                    "databaseVersion": status.databaseVersion, "binaryHeadVersion": status.headVersion,
                    "migrations": entries, "problems": status.problems.map(\.message),
                ]
                let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted])
                print(String(decoding: data, as: UTF8.self))
                return
            }
            print(Self.table(status))
            for problem in status.problems { StandardError.write("problem: \(problem.message)\n") }
        }

        static func table(_ status: MigrationStatus) -> String {
            let header = ["VERSION", "NAME", "STATE", "APPLIED AT", "CHECKSUM"]
            let formatter = ISO8601DateFormatter()
            let rows = status.entries.map { entry in
                [
                    String(format: "%04d", entry.version), entry.name, entry.state.rawValue,
                    entry.applied.map { formatter.string(from: $0.appliedAt) + ($0.method == "baseline" ? " (baseline)" : "") } ?? "-",
                    entry.applied?.checksum ?? entry.fileChecksum ?? "-",
                ]
            }
            let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
            return ([header] + rows).map { row in
                row.enumerated().map { column, text in
                    column == row.count - 1 ? text : text.padding(toLength: widths[column], withPad: " ", startingAt: 0)
                }.joined(separator: "  ")
            }.joined(separator: "\n")
        }
    }

    struct Up: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Apply pending migrations, each in its own transaction with its history row.")

        @OptionGroup var common: CommonOptions
        @Option(help: "Apply only up to and including this version.") var to: Int?
        @Flag(name: .customLong("dry-run"), help: "Print what would run and change nothing.") var dryRun = false

        func run() async throws {
            let result = try await MigrateCommand.withRunner(common) { try await $0.up(to: to, dryRun: dryRun) }
            if result.applied.isEmpty {
                print("nothing to apply; database at version \(result.status.databaseVersion)")
            }
            for file in result.applied {
                print("\(dryRun ? "would apply" : "applied") \(file.fileName)\(file.runsInTransaction ? "" : " (no transaction)")")
            }
        }
    }

    struct Validate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Exit non-zero if applied files were edited or are missing, or pending files sit below the applied head.")

        @OptionGroup var common: CommonOptions

        func run() async throws {
            let status = try await MigrateCommand.withRunner(common) { try await $0.status() }
            let problems = status.problems
            if problems.isEmpty {
                print("ok: \(status.entries.filter { $0.applied != nil }.count) applied, \(status.pending.count) pending")
                return
            }
            throw CLIFailure(message: problems.map(\.message).joined(separator: "\n"))
        }
    }

    struct Baseline: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Adopt an existing database: record migrations 1…V as applied without running them.")

        @OptionGroup var common: CommonOptions
        @Option(help: "The version the database's schema already matches.") var version: Int

        func run() async throws {
            let files = try await MigrateCommand.withRunner(common) { try await $0.baseline(version: version) }
            for file in files { print("baselined \(file.fileName)") }
        }
    }
}
