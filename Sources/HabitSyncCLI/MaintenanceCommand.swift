import ArgumentParser
import Foundation
import HabitSyncStore

/// `habitsync-server maintenance run`.
struct MaintenanceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "maintenance", abstract: "Housekeeping.", subcommands: [Run.self])

    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Purge tombstones, idempotency records and conflict-log rows past retention; archive old usage-event partitions.")

        @OptionGroup var common: CommonOptions
        @Option(
            name: .customLong("tombstone-retention"),
            help: ArgumentHelp("How long deletes are kept for pulls; older cursors get 410. Env: HABITSYNC_TOMBSTONE_RETENTION. Default: 90d.", valueName: "duration"))
        var tombstoneRetention: String?
        @Option(
            name: .customLong("batch-retention"),
            help: ArgumentHelp("How long push idempotency records are kept (at least 7 days in production). Env: HABITSYNC_BATCH_RETENTION. Default: 7d.", valueName: "duration"))
        var batchRetention: String?
        @Option(name: .customLong("conflict-retention"), help: ArgumentHelp("How long conflict-log rows are kept. Env: HABITSYNC_CONFLICT_RETENTION. Default: 90d.", valueName: "duration"))
        var conflictRetention: String?
        @Option(
            name: .customLong("usage-event-retention"),
            help: ArgumentHelp("Age after which usage-event months move to the archive schema. Env: HABITSYNC_USAGE_EVENT_RETENTION. Default: 90d.", valueName: "duration"))
        var usageEventRetention: String?
        @Flag(help: "Print one JSON object.") var json = false

        func seconds(_ flag: String?, _ name: String, _ variable: String, _ defaultDays: Double) throws -> TimeInterval {
            let duration = try ConfigurationValue.resolve(
                flag: flag, flagName: name, environmentVariable: variable, default: Duration.seconds(defaultDays * 86_400),
                rule: "must be a positive duration such as 90d, 12h or 30m", parse: ConfigurationValue.duration)
            return duration / .seconds(1)
        }

        func run() async throws {
            let retention = MaintenanceStore.Retention(
                tombstones: try seconds(tombstoneRetention, "tombstone-retention", "HABITSYNC_TOMBSTONE_RETENTION", 90),
                pushBatches: try seconds(batchRetention, "batch-retention", "HABITSYNC_BATCH_RETENTION", 7),
                conflicts: try seconds(conflictRetention, "conflict-retention", "HABITSYNC_CONFLICT_RETENTION", 90),
                usageEvents: try seconds(usageEventRetention, "usage-event-retention", "HABITSYNC_USAGE_EVENT_RETENTION", 90))
            let report = try await common.withOwnerPool(logger: try common.makeQuietLogger(), applicationName: "habitsync-server maintenance") { pool in
                try await MaintenanceStore(pool: pool).run(retention: retention)
            }
            if json {
                let object: [String: Any] = [
                    "tenants": report.tenants, "tombstonesPurged": report.tombstonesPurged, "pushBatchesPurged": report.pushBatchesPurged,
                    "conflictsPurged": report.conflictsPurged, "partitionsCreated": report.partitionsCreated, "partitionsArchived": report.partitionsArchived,
                    "defaultPartitionRowsMoved": report.defaultPartitionRowsMoved, "partitionsDeferred": report.partitionsDeferred, "usersSkippedBusy": report.usersSkippedBusy,
                ]
                try JSONLine.print(object)
                return
            }
            print(
                "tenants \(report.tenants), tombstones purged \(report.tombstonesPurged), idempotency records purged \(report.pushBatchesPurged), conflict-log rows purged \(report.conflictsPurged), partitions created \(report.partitionsCreated), archived \(report.partitionsArchived.count) (deferred \(report.partitionsDeferred.count)), usage events moved out of the default partition \(report.defaultPartitionRowsMoved), users skipped while pushing \(report.usersSkippedBusy)"
            )
        }
    }
}
