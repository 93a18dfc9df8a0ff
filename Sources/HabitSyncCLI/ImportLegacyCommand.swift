import ArgumentParser
import Foundation
import HabitSyncAuth
import HabitSyncDomain
import HabitSyncStore

/// `habitsync-server import-legacy --tenant T --user U FILE [--dry-run]`.
struct ImportLegacyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import-legacy",
        abstract: "Import the old habit app's data for one user (docs/legacy-import.md): all or nothing, idempotent, archived.")

    @OptionGroup var common: CommonOptions
    @Option(help: "Tenant id or name.") var tenant: String
    @Option(help: "User id (the sub claim of the user's tokens).") var user: String
    @Option(name: .customLong("time-zone"), help: "IANA time zone of the day keys, for a bare habit array or a habits.json container.")
    var timeZone: String?
    @Flag(name: .customLong("dry-run"), help: "Print the report and write nothing.") var dryRun = false
    @Flag(help: "Print the report as one JSON object.") var json = false
    @Argument(help: "The export file.") var file: String

    func run() async throws {
        if let problem = SubjectRules.problem(user) { throw ValidationError("--user \(problem)") }
        guard let data = FileManager.default.contents(atPath: file) else { throw CLIFailure(message: "cannot read \(file)") }
        let sha = LegacyImportStore.sha256(data)
        let report = try await common.withOwnerPool(logger: try common.makeQuietLogger(), applicationName: "habitsync-server import-legacy") { pool in
            let context = ValidationContext(now: Date(), maximumSkew: 300, timeZones: try await TimeZoneCatalog().names(pool))
            let plan: LegacyImportPlan
            do { plan = try LegacyImportPlan.make(from: data, timeZone: timeZone, context: context) } catch { throw CLIFailure(message: "\(file): \(error)") }
            let found = try await TenantStore(pool: pool).require(tenant)
            return try await LegacyImportStore(pool: pool).run(plan, tenant: found.id, user: user, sourceSHA256: sha, dryRun: dryRun)
        }
        if json {
            let object: [String: Any] = [
                "habits": report.habits, "reminders": report.reminders, "days": report.days, "written": report.written,
                "alreadyImported": report.alreadyImported, "dryRun": report.dryRun, "warnings": report.warnings,
                "statusMismatches": report.statusMismatches, "sourceSha256": sha,
            ]
            try JSONLine.print(object)
            return
        }
        let verb = report.dryRun ? "would import" : report.alreadyImported ? "already imported (nothing changed):" : "imported"
        print("\(verb) \(report.habits) habits, \(report.reminders) reminders, \(report.days) days\(report.dryRun || report.alreadyImported ? "" : " (\(report.written) records written)")")
        for warning in report.warnings { print("warning: \(warning)") }
        for mismatch in report.statusMismatches { print("note: \(mismatch)") }
    }
}
