import ArgumentParser
import EmbeddedPostgres
import Foundation
import HabitSyncServer
import LibPQClient
import Logging
import Migrations
import Synchronization

/// Options every command shares: where the database is, where the migrations are, logging.
struct CommonOptions: ParsableArguments {
    @Option(
        name: .customLong("database-url"),
        help: ArgumentHelp(
            "PostgreSQL connection URI or conninfo. Env: DATABASE_URL. Default: the embedded database under --data-dir.",
            valueName: "url"))
    var databaseURL: String?

    @Option(
        name: .customLong("data-dir"),
        help: ArgumentHelp(
            "Folder of the embedded database, used when no database URL is set. Env: HABITSYNC_DATA_DIR. Default: .habitsync in the checkout the binary was built in, else ./.habitsync. PostgreSQL's server binaries for it: HABITSYNC_PG_BINDIR, else the newest /usr/lib/postgresql/*/bin, else $PATH.",
            valueName: "path"))
    var dataDirectory: String?

    @Option(
        name: .customLong("migrations-dir"),
        help: ArgumentHelp(
            "Folder of the SQL migrations, for development. Env: HABITSYNC_MIGRATIONS_DIR. Default: the migrations compiled into the binary.",
            valueName: "path"))
    var migrationsDirectory: String?

    @Option(name: CommonSettings.logLevel.name, help: CommonSettings.logLevel.help) var logLevel: String?

    @Option(name: CommonSettings.logFormat.name, help: CommonSettings.logFormat.help) var logFormat: String?

    @Option(name: CommonSettings.migrationLockTimeout.name, help: CommonSettings.migrationLockTimeout.help) var migrationLockTimeout: String?

    func makeLogger(label: String = "habitsync") throws -> Logger {
        let level = try CommonSettings.logLevel.resolve(logLevel)
        let format = try CommonSettings.logFormat.resolve(logFormat)
        LoggingBootstrap.once(format: format, level: level)
        var logger = Logger(label: label)
        logger.logLevel = level
        return logger
    }

    /// `--migrations-dir` (or the environment) for development; else the migrations compiled
    /// into the binary.
    func migrationDirectory() throws -> MigrationDirectory {
        let explicit = migrationsDirectory ?? ConfigurationValue.environment["HABITSYNC_MIGRATIONS_DIR"].flatMap { $0.isEmpty ? nil : $0 }
        guard let explicit else { return try MigrationDirectory.bundled() }
        return try MigrationDirectory(url: URL(fileURLWithPath: explicit))
    }

    func migrationOptions() throws -> MigrationRunner.Options {
        MigrationRunner.Options(lockTimeout: try CommonSettings.migrationLockTimeout.resolve(migrationLockTimeout))
    }

    /// The embedded database's folder these options name (`--data-dir`, the environment, or
    /// the default), and where the cluster really lives (a system folder when the `postgres`
    /// user cannot reach it).
    func embeddedDirectories() -> (requested: URL, cluster: URL) {
        let named = self.dataDirectory ?? ConfigurationValue.environment["HABITSYNC_DATA_DIR"].flatMap { $0.isEmpty ? nil : $0 }
        let requested = EmbeddedDataDirectory.resolve(
            named: named, executable: EmbeddedDataDirectory.executable,
            currentDirectory: URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        )
        .appendingPathComponent("postgres")
        return (requested, EmbeddedPostgres.reachableDirectory(for: requested))
    }

    /// Connects to `DATABASE_URL`, or starts (or attaches to) the embedded cluster. Only
    /// `serve` creates a cluster (`creating`): an admin command that finds none refuses and
    /// names the folder it looked in, instead of filling a new, empty database.
    func openDatabase(logger: Logger, creating: Bool = false) throws -> DatabaseLocation {
        let url = databaseURL ?? ConfigurationValue.environment["DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 }
        if let url {
            do {
                try PGConnectionConfiguration.validate(url)
            } catch {
                throw ValidationError("DATABASE_URL / --database-url is not a valid PostgreSQL connection string: \(error.message)")
            }
            return DatabaseLocation(connectionString: url, embedded: nil)
        }
        let (requested, root) = embeddedDirectories()
        if root != requested {
            logger.notice(
                "the postgres user cannot reach the data directory; the embedded database lives in a system folder instead",
                metadata: ["requested": "\(requested.path)", "directory": "\(root.path)"])
        }
        guard creating || EmbeddedPostgres.isCluster(root) else {
            throw CLIFailure(
                message: "no embedded database at \(requested.path)\(root == requested ? "" : " (kept in \(root.path))"), and this command creates none: "
                    + "run it where `habitsync-server serve` ran, or name the database with --data-dir, HABITSYNC_DATA_DIR or DATABASE_URL (`habitsync-server embedded list` shows the embedded ones)")
        }
        let embedded = try EmbeddedPostgres(configuration: .init(directory: root), logger: logger)
        if creating { try? EmbeddedPostgres.recordRequestedDirectory(requested, of: root) }
        let running = try embedded.start()
        switch running.how {
        case .started:
            break
        case .adopted:
            logger.notice(
                "the embedded PostgreSQL was left running by a process that is gone; this one stops it when it is done",
                metadata: ["directory": "\(root.path)", "port": "\(running.port)"])
        case .attached(let keeper):
            logger.notice(
                "attached to the embedded PostgreSQL another process started; it keeps running until that process ends (`habitsync-server embedded stop --force` stops it sooner)",
                metadata: ["directory": "\(root.path)", "port": "\(running.port)", "keeper_pid": "\(keeper.pid)"])
        }
        return DatabaseLocation(connectionString: running.connectionString, embedded: embedded)
    }
}

extension CommonOptions {
    /// Runs an admin command's `body` with a small pool of the login role (the schema owner)
    /// on `DATABASE_URL` or the embedded database; failures become `error: …` and exit 1.
    func withOwnerPool<T>(logger: Logger, applicationName: String, _ body: (PGPool) async throws -> T) async throws -> T {
        let database = try openDatabase(logger: logger)
        defer { database.close() }
        let configuration = PGPool.Configuration(
            connection: PGConnectionConfiguration(
                connectionString: database.connectionString, applicationName: applicationName,
                notices: DatabaseNoticeLog(logger: logger).sink),
            maximumConnections: 1)
        do {
            return try await PGPool.withPool(configuration, logger: logger, body)
        } catch let error as PGError where error.sqlState == .undefinedTable {
            throw CLIFailure(message: "the database has no habitsync schema yet (\(error.message)); run `habitsync-server migrate up` first")
        } catch {
            throw CLIFailure(message: "\(error)")
        }
    }

    /// A logger for admin commands: warnings and worse unless a level was asked for.
    func makeQuietLogger() throws -> Logger {
        var logger = try makeLogger()
        if logLevel == nil && ConfigurationValue.environment["HABITSYNC_LOG_LEVEL"] == nil { logger.logLevel = .warning }
        return logger
    }
}

/// Where the database is; stops the embedded cluster if this process started it.
struct DatabaseLocation {
    let connectionString: String
    let embedded: EmbeddedPostgres?

    /// Stops the embedded database when this process keeps it (or its keeper is gone) and
    /// nobody else is connected; the last process to leave stops it.
    func close() { embedded?.release() }
}

/// swift-log's bootstrap may run once per process; tests run several commands in one.
enum LoggingBootstrap {
    private static let bootstrapped = Mutex(false)

    static func once(format: StructuredLogHandler.Format, level: Logger.Level) {
        bootstrapped.withLock { done in
            guard !done else { return }
            done = true
            LoggingSystem.bootstrap { label in StructuredLogHandler(label: label, format: format, level: level) }
        }
    }
}
