import ArgumentParser
import Foundation
import HabitSyncAuth
import HabitSyncServer
import HabitSyncStore
import LibPQClient

/// `habitsync-server user export | erase | allow-again --tenant T --user U`.
struct UserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user",
        abstract: "Export or erase one user's data (docs/accounts.md).",
        subcommands: [Export.self, Erase.self, AllowAgain.self])

    struct Target: ParsableArguments {
        @Option(help: "Tenant id or name.") var tenant: String
        @Option(help: "User id (the sub claim of the user's tokens).") var user: String

        func validate() throws {
            if let problem = SubjectRules.problem(user) { throw ValidationError("--user \(problem)") }
        }

        func tenantID(_ pool: PGPool) async throws -> UUID {
            try await TenantStore(pool: pool).require(tenant).id
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write everything the server holds for a user as JSON (the format of GET /v1/account/export); prints counts.")

        @OptionGroup var common: CommonOptions
        @OptionGroup var target: Target
        @Option(help: ArgumentHelp("File to write (replaced). Default: standard output, counts to standard error.", valueName: "file"))
        var output: String?

        func run() async throws {
            let handle: FileHandle
            if let output {
                guard FileManager.default.createFile(atPath: output, contents: nil), let file = FileHandle(forWritingAtPath: output) else {
                    throw CLIFailure(message: "cannot write \(output)")
                }
                handle = file
            } else {
                handle = .standardOutput
            }
            defer { if output != nil { try? handle.close() } }
            let summary = try await common.withOwnerPool(logger: try common.makeQuietLogger(), applicationName: "habitsync-server user") { pool in
                let tenant = try await target.tenantID(pool)
                // An admin's one-off export is not a request: a busy database may make a page slow
                // (a loaded Citus cluster took over 5 s), and failing it helps nobody.
                let accounts = AccountStore(pool: pool, statementTimeout: .seconds(300))
                try await accounts.checkExportable(tenant: tenant, user: target.user)
                return try await accounts.export(tenant: tenant, user: target.user) { piece in try handle.write(contentsOf: Data(piece.utf8)) }
            }
            let lines =
                ["changes \(summary.sections["changes"] ?? 0)"]
                + summary.collections.keys.sorted().map { "  \($0) \(summary.collections[$0] ?? 0)" }
                + ["conflicts", "legacyImports", "dataMigrations", "devices", "pushBatches"].map { "\($0) \(summary.sections[$0] ?? 0)" }
            let text = lines.joined(separator: "\n") + "\n"
            if output == nil { StandardError.write(text) } else { print(text, terminator: "") }
        }
    }

    struct Erase: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Erase every row of a user in every table and refuse their tokens afterwards (410 account_erased); prints rows per table.")

        @OptionGroup var common: CommonOptions
        @OptionGroup var target: Target
        @Flag(name: .customLong("dry-run"), help: "Count what would be erased and change nothing.") var dryRun = false
        @Flag(help: "Print one JSON object.") var json = false

        func run() async throws {
            let report = try await common.withOwnerPool(logger: try common.makeQuietLogger(), applicationName: "habitsync-server user") { pool in
                try await AccountStore(pool: pool).eraseUser(tenant: try await target.tenantID(pool), user: target.user, dryRun: dryRun)
            }
            try ErasureReportPrinter.print(report, json: json)
        }
    }

    struct AllowAgain: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "allow-again",
            abstract: "Forget that a user was erased, so that their tokens sync again (into an empty account).")

        @OptionGroup var common: CommonOptions
        @OptionGroup var target: Target

        func run() async throws {
            let removed = try await common.withOwnerPool(logger: try common.makeQuietLogger(), applicationName: "habitsync-server user") { pool in
                try await AccountStore(pool: pool).allowAgain(tenant: try await target.tenantID(pool), user: target.user)
            }
            print(removed ? "allowed again: the user's tokens sync into an empty account" : "the user was not erased; nothing changed")
        }
    }
}

/// Prints an erasure's rows per table, as lines or one JSON object.
enum ErasureReportPrinter {
    static func print(_ report: ErasureReport, json: Bool) throws {
        if json {
            let object: [String: Any] = ["dryRun": report.dryRun, "rows": report.rows, "total": report.total]
            try JSONLine.print(object)
            return
        }
        for table in report.rows.keys.sorted() { Swift.print("\(table) \(report.rows[table] ?? 0)") }
        Swift.print(report.dryRun ? "would erase \(report.total) rows (dry run: nothing changed)" : "erased \(report.total) rows")
    }
}
