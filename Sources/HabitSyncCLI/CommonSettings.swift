import HabitSyncServer
import Logging

/// The settings every command shares that have a default and a rule (`ConfigurationSetting`);
/// where the database and the migrations are is resolved by `CommonOptions` itself.
enum CommonSettings {
    static let logLevel = ConfigurationSetting<Logger.Level>.choice(
        "log-level", "HABITSYNC_LOG_LEVEL", "trace, debug, info, notice, warning, error or critical.",
        [
            "trace": .trace, "debug": .debug, "info": .info, "notice": .notice, "warning": .warning, "error": .error,
            "critical": .critical,
        ], default: "info", valueName: "level")
    static let logFormat = ConfigurationSetting<StructuredLogHandler.Format>.choice(
        "log-format", "HABITSYNC_LOG_FORMAT", "json or logfmt.", ["json": .json, "logfmt": .logfmt], default: "json", valueName: "format")
    static let migrationLockTimeout = ConfigurationSetting<Duration>.duration(
        "migration-lock-timeout", "HABITSYNC_MIGRATION_LOCK_TIMEOUT", "lock_timeout for migration statements, e.g. 10s.", default: .seconds(10))

    /// Every setting as the README shows it (`ConfigurationSettingTests`).
    static let all: [ConfigurationSettingRow] = [logLevel.row, logFormat.row, migrationLockTimeout.row]
}
