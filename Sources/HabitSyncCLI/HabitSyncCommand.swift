import ArgumentParser
import HabitSyncDomain

/// `habitsync-server`: one binary for ops (serve), admins (migrate) and development.
public struct HabitSyncCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "habitsync-server",
        abstract: "Sync server for local-first habit, focus and mindful-usage apps, on PostgreSQL.",
        discussion: """
            Settings come from flags, then environment variables (DATABASE_URL, HABITSYNC_*), then defaults.
            Without DATABASE_URL every command uses an embedded PostgreSQL cluster under .habitsync/postgres in the
            checkout the binary was built in (else in the current folder, or --data-dir): `serve` creates it, other
            commands attach to it (starting it for themselves if it is stopped). `embedded list` shows them.
            """,
        version: Release.version,
        subcommands: [
            ServeCommand.self, MigrateCommand.self, TenantCommand.self, TokenCommand.self, UserCommand.self, EpochCommand.self, ImportLegacyCommand.self, MaintenanceCommand.self,
            DistributeCommand.self, EmbeddedCommand.self,
        ]
    )

    public init() {}
}
