import Foundation
import LibPQClient
import Logging

/// Applies versioned SQL files to a database, safely from any number of processes at once.
///
/// - One session-level advisory lock serialises runners. It is *polled* with
///   `pg_try_advisory_lock` outside any transaction: a waiter blocked inside a statement would
///   hold a snapshot that a `CREATE INDEX CONCURRENTLY` in the lock holder waits for, forever.
/// - Each file runs in one transaction together with its history row (no "dirty" state), unless
///   its first line is `-- habitsync:no-transaction`.
/// - `lock_timeout` keeps a migration stuck behind live traffic from stalling every query
///   queued behind its lock: it fails cleanly instead.
public struct MigrationRunner: Sendable {
    public struct Options: Sendable {
        public var lockTimeout: Duration
        /// How long to wait for another runner before giving up.
        public var lockWaitLimit: Duration
        public init(lockTimeout: Duration = .seconds(10), lockWaitLimit: Duration = .seconds(600)) {
            self.lockTimeout = lockTimeout
            self.lockWaitLimit = lockWaitLimit
        }
    }

    /// The advisory lock key: "habitsyn" in ASCII, so it is recognisable in `pg_locks`.
    public static let advisoryLockKey: Int64 = 0x6861_6269_7473_796E

    public let pool: PGPool
    public let directory: MigrationDirectory
    public let options: Options
    private let logger: Logger

    public init(pool: PGPool, directory: MigrationDirectory, options: Options = Options(), logger: Logger) {
        self.pool = pool
        self.directory = directory
        self.options = options
        self.logger = logger
    }

    /// Compares the files with the history table. Takes no lock and changes nothing.
    public func status() async throws -> MigrationStatus {
        let history = try await pool.withConnection { try await MigrationHistory.read($0) }
        return MigrationStatus(files: directory.files, history: history)
    }

    /// Throws the first problem (edited, missing or out-of-order files), if any.
    public func validate() async throws -> MigrationStatus {
        let status = try await status()
        if let problem = status.problems.first { throw problem }
        return status
    }

    public struct UpResult: Sendable {
        public let applied: [MigrationFile]
        public let status: MigrationStatus
    }

    /// Applies pending migrations up to `target` (all when nil). With `dryRun` it only reports
    /// what would run.
    @discardableResult
    public func up(to target: Int? = nil, dryRun: Bool = false) async throws -> UpResult {
        if dryRun {
            let status = try await validate()
            let wouldRun = status.pending.filter { file in target.map { file.version <= $0 } ?? true }
            return UpResult(applied: wouldRun, status: status)
        }
        return try await withMigrationLock { connection in
            try await connection.simpleQuery(unsafeSQL: MigrationHistory.createTableSQL)
            let status = MigrationStatus(files: directory.files, history: try await MigrationHistory.read(connection))
            if let problem = status.problems.first { throw problem }
            if status.databaseIsAhead {
                logger.warning(
                    "the database has migrations this binary does not know; a newer version migrated it",
                    metadata: [
                        "database_version": "\(status.databaseVersion)", "binary_head": "\(status.headVersion)",
                    ])
            }
            var applied: [MigrationFile] = []
            for file in status.pending where target.map({ file.version <= $0 }) ?? true {
                try await apply(file, on: connection)
                applied.append(file)
            }
            let final = MigrationStatus(files: directory.files, history: try await MigrationHistory.read(connection))
            return UpResult(applied: applied, status: final)
        }
    }

    /// Records versions 1…`version` as applied without running them, to adopt a database whose
    /// schema was created some other way. Refused when any of them is already recorded.
    public func baseline(version: Int) async throws -> [MigrationFile] {
        try await withMigrationLock { connection in
            try await connection.simpleQuery(unsafeSQL: MigrationHistory.createTableSQL)
            let history = try await MigrationHistory.read(connection)
            let files = directory.files.filter { $0.version <= version }
            guard directory.files.contains(where: { $0.version == version }) else {
                throw MigrationError(.baselineRefused, "there is no migration file with version \(version) to baseline at")
            }
            if let recorded = history.first(where: { $0.version <= version }) {
                throw MigrationError(.baselineRefused, "version \(recorded.version) (\(recorded.name)) is already recorded; baseline only adopts a database with no history up to \(version)")
            }
            try await connection.simpleQuery(unsafeSQL: "BEGIN")
            do {
                for file in files {
                    try await connection.query(MigrationHistory.insert(file, durationMilliseconds: 0, method: "baseline"))
                }
                try await connection.simpleQuery(unsafeSQL: "COMMIT")
            } catch {
                _ = try? await connection.simpleQuery(unsafeSQL: "ROLLBACK")
                throw error
            }
            return files
        }
    }

    // MARK: - Applying

    private func apply(_ file: MigrationFile, on connection: PGConnection) async throws {
        let statements = SQLStatementSplitter.split(file.sql)
        let clock = ContinuousClock()
        let started = clock.now
        logger.info("applying migration", metadata: ["migration": "\(file.fileName)", "transaction": "\(file.runsInTransaction)"])
        if file.runsInTransaction {
            try await connection.simpleQuery(unsafeSQL: "BEGIN")
            do {
                try await run(statements, of: file, on: connection)
                try await connection.query(MigrationHistory.insert(file, durationMilliseconds: milliseconds(clock.now - started), method: "applied"))
                try await connection.simpleQuery(unsafeSQL: "COMMIT")
            } catch {
                _ = try? await connection.simpleQuery(unsafeSQL: "ROLLBACK")
                throw error
            }
        } else {
            // Each statement commits on its own; the history row follows the last one. A file
            // interrupted half-way runs again from the top, so such files must be re-runnable
            // (IF NOT EXISTS, or DROP INDEX CONCURRENTLY IF EXISTS first).
            try await run(statements, of: file, on: connection)
            try await connection.query(MigrationHistory.insert(file, durationMilliseconds: milliseconds(clock.now - started), method: "applied"))
        }
        logger.info("applied migration", metadata: ["migration": "\(file.fileName)", "duration_ms": "\(milliseconds(clock.now - started))"])
    }

    private func run(_ statements: [SQLStatementSplitter.Statement], of file: MigrationFile, on connection: PGConnection) async throws {
        for (index, statement) in statements.enumerated() {
            do {
                try await connection.simpleQuery(unsafeSQL: statement.sql)
            } catch let error as PGError {
                let excerpt = statement.sql.count > 300 ? String(statement.sql.prefix(300)) + "…" : statement.sql
                var message = "\(file.fileName) failed at statement \(index + 1) (line \(statement.line)): \(error.sqlState.map { "\($0) " } ?? "")\(error.message)"
                if let detail = error.detail { message += " (\(detail))" }
                message += "\n  statement: \(excerpt)"
                throw MigrationError(.statementFailed, message)
            }
        }
    }

    private func milliseconds(_ duration: Duration) -> Int {
        Int(duration / .milliseconds(1))
    }

    // MARK: - Locking

    private func withMigrationLock<Result: Sendable>(_ body: (PGConnection) async throws -> Result) async throws -> Result {
        try await pool.withConnection { connection in
            // The lock is a session's, and so are the migrations' settings: through a pooler
            // (PgBouncer) the session is not ours. A pooler answers the connection with a
            // backend id of its own, so the id PostgreSQL reports differs.
            let backend = try await connection.query("SELECT pg_backend_pid() AS pid").single().decode("pid", as: Int32.self)
            guard backend == connection.backendPID else {
                throw MigrationError(
                    .behindPooler,
                    "migrations need a direct connection to PostgreSQL, not one through a connection pooler such as PgBouncer (the session-level migration lock cannot be held through one): give them the direct URL (serve: --database-url, with --request-database-url for the pooler)"
                )
            }
            let lockTimeout = max(1, milliseconds(options.lockTimeout))
            try await connection.simpleQuery(unsafeSQL: "SET lock_timeout = \(lockTimeout); SET statement_timeout = 0")
            let clock = ContinuousClock()
            let deadline = clock.now + options.lockWaitLimit
            var delay = Duration.milliseconds(50)
            var announced = false
            while true {
                let acquired = try await connection.query("SELECT pg_try_advisory_lock(\(Self.advisoryLockKey)) AS acquired").single().decode("acquired", as: Bool.self)
                if acquired { break }
                if !announced {
                    logger.info("waiting for another migration runner to finish")
                    announced = true
                }
                guard clock.now < deadline else {
                    throw MigrationError(.lockTimeout, "another migration runner held the migration lock for longer than \(options.lockWaitLimit)")
                }
                try await Task.sleep(for: delay)
                delay = min(delay * 2, .milliseconds(500))
            }
            do {
                let result = try await body(connection)
                _ = try await connection.query("SELECT pg_advisory_unlock(\(Self.advisoryLockKey))")
                try await connection.simpleQuery(unsafeSQL: "RESET lock_timeout; RESET statement_timeout")
                return result
            } catch {
                // A broken connection releases the lock with its session.
                _ = try? await connection.query("SELECT pg_advisory_unlock(\(Self.advisoryLockKey))")
                _ = try? await connection.simpleQuery(unsafeSQL: "RESET lock_timeout; RESET statement_timeout")
                throw error
            }
        }
    }
}
