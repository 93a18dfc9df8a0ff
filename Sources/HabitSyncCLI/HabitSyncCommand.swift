import ArgumentParser
import HabitSyncDomain

/// `habitsync-server`: one binary for ops (serve), admins (migrate) and development.
public struct HabitSyncCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "habitsync-server",
        abstract: "Sync server for local-first habit, focus and mindful-usage apps, on PostgreSQL.",
        discussion: """
            Settings come from flags, then environment variables (DATABASE_URL, HABITSYNC_*), then defaults.
            Without DATABASE_URL every command uses an embedded PostgreSQL cluster under ./.habitsync/postgres,
            started for the command and stopped when it ends.
            """,
        version: Release.version,
        subcommands: [ServeCommand.self, MigrateCommand.self, TenantCommand.self, TokenCommand.self, UserCommand.self, EpochCommand.self, ImportLegacyCommand.self, MaintenanceCommand.self, DistributeCommand.self]
    )

    public init() {}
}
