import Foundation
import LibPQClient
import Migrations
import TestSupport
import Testing

@Suite struct MigrationRunnerTests {
    @Test func aFreshDatabaseGetsEveryMigrationAndASecondRunDoesNothing() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        let directory = try MigrationDirectory(url: TestPostgres.migrationsDirectory)
        try await database.withPool(size: 1) { pool in
            let runner = MigrationRunner(pool: pool, directory: directory, logger: TestPostgres.logger)
            let first = try await runner.up()
            #expect(first.applied.map(\.version) == directory.files.map(\.version))
            #expect(first.status.entries.allSatisfy { $0.state == .applied })
            #expect(first.status.databaseVersion == directory.headVersion)
            for table in ["tenants", "habits", "daily_progress", "usage_events", "conflict_log", "push_batches"] {
                #expect(try await tableExists(pool, table), "\(table) missing")
            }
            let checksums = try await pool.withConnection { connection in
                try await connection.query("SELECT checksum, duration_ms, applied_by, method FROM habitsync_schema_migrations ORDER BY version").rows
            }
            #expect(try checksums.map { try $0.decode("checksum", as: String.self) } == directory.files.map(\.checksum))
            #expect(try checksums.allSatisfy { try $0.decode("method", as: String.self) == "applied" && !$0.decode("applied_by", as: String.self).isEmpty })

            let second = try await runner.up()
            #expect(second.applied.isEmpty)
            #expect(try await historyVersions(pool) == directory.files.map(\.version))
        }
    }

    @Test func fourRunnersStartedAtOnceApplyEachFileExactlyOnce() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        // The real files (0002 is a no-transaction CREATE INDEX CONCURRENTLY), plus a slow
        // transactional file and a second concurrent index, so the runners really overlap.
        let folder = try MigrationFolder.real(adding: [
            "0900_slow_step.sql": "CREATE TABLE slow_marker (n int); SELECT pg_sleep(0.3); INSERT INTO slow_marker VALUES (1);",
            "0901_concurrent_index.sql": "-- habitsync:no-transaction\nCREATE INDEX CONCURRENTLY IF NOT EXISTS slow_marker_n ON slow_marker (n);",
        ])
        let directory = try MigrationDirectory(url: folder.url)
        let pools = (0..<4).map { _ in database.pool(size: 1) }
        let appliedCounts = try await withThrowingTaskGroup(of: Int.self) { group in
            for pool in pools {
                group.addTask {
                    let runner = MigrationRunner(pool: pool, directory: directory, options: .init(lockTimeout: .seconds(30)), logger: TestPostgres.logger)
                    return try await runner.up().applied.count
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for pool in pools {
            pool.close()
            await pool.shutdownThreads()
        }
        #expect(appliedCounts.reduce(0, +) == directory.files.count)
        #expect(appliedCounts.filter { $0 > 0 }.count >= 1)
        try await database.withPool(size: 1) { pool in
            #expect(try await historyVersions(pool) == directory.files.map(\.version))
            let markers = try await pool.withConnection { try await $0.query("SELECT count(*) AS n FROM slow_marker").single().decode("n", as: Int.self) }
            #expect(markers == 1)
            let validIndexes = try await pool.withConnection { connection in
                try await connection.query(
                    """
                    SELECT count(*) AS n FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
                    WHERE c.relname IN ('slow_marker_n', 'conflict_log_by_day') AND i.indisvalid
                    """
                ).single().decode("n", as: Int.self)
            }
            #expect(validIndexes == 2)
        }
    }

    @Test func anEditedAppliedFileIsRefusedByName() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        let folder = try MigrationFolder(["0001_first.sql": "CREATE TABLE first (n int);", "0002_second.sql": "CREATE TABLE second (n int);"])
        try await database.withPool(size: 1) { pool in
            try await folder.runner(pool).up()
            try folder.write("0002_second.sql", "CREATE TABLE second (n bigint);")
            try folder.write("0003_third.sql", "CREATE TABLE third (n int);")
            let runner = try folder.runner(pool)
            await #expect { try await runner.up() } throws: { error in
                let error = error as! MigrationError
                return error.code == .modifiedFile && error.message.contains("0002_second.sql")
            }
            await #expect { try await runner.validate() } throws: { ($0 as! MigrationError).code == .modifiedFile }
            let status = try await runner.status()
            #expect(status.entries.map(\.state) == [.applied, .modified, .pending])
            // Nothing ran: the pending file stays pending.
            #expect(try await tableExists(pool, "third") == false)
        }
    }

    @Test func aFailingFileRollsBackWholeAndTheErrorNamesFileAndStatement() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        let folder = try MigrationFolder([
            "0001_good.sql": "CREATE TABLE good (n int);",
            "0002_bad.sql": """
            CREATE TABLE half_done (n int);
            INSERT INTO half_done VALUES (1);
            -- the typo below fails the file
            ALTER TABLE no_such_table ADD COLUMN x int;
            CREATE TABLE never_reached (n int);
            """,
        ])
        try await database.withPool(size: 1) { pool in
            do {
                try await folder.runner(pool).up()
                Issue.record("the failing migration succeeded")
            } catch let error as MigrationError {
                #expect(error.code == .statementFailed)
                #expect(error.message.contains("0002_bad.sql"))
                #expect(error.message.contains("statement 3"))
                #expect(error.message.contains("line 4"))
                #expect(error.message.contains("ALTER TABLE no_such_table"))
                #expect(error.message.contains("42P01"))
            }
            #expect(try await historyVersions(pool) == [1])
            #expect(try await tableExists(pool, "good"))
            #expect(try await tableExists(pool, "half_done") == false)
            #expect(try await tableExists(pool, "never_reached") == false)
            // Fixed by a new file? No: fixing the failed file itself is allowed, it never applied.
            try folder.write("0002_bad.sql", "CREATE TABLE half_done (n int);")
            try await folder.runner(pool).up()
            #expect(try await historyVersions(pool) == [1, 2])
        }
    }

    @Test func aMissingAppliedFileIsRefusedByName() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        let folder = try MigrationFolder(["0001_a.sql": "SELECT 1;", "0002_b.sql": "SELECT 2;", "0003_c.sql": "SELECT 3;"])
        try await database.withPool(size: 1) { pool in
            try await folder.runner(pool).up()
            try folder.remove("0002_b.sql")
            await #expect { try await folder.runner(pool).up() } throws: { error in
                let error = error as! MigrationError
                return error.code == .missingFile && error.message.contains("0002_b.sql")
            }
            let status = try await folder.runner(pool).status()
            #expect(status.entries.first { $0.version == 2 }?.state == .missingFile)
        }
    }

    @Test func aPendingFileBelowTheAppliedHeadIsRefusedAsOutOfOrder() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        let folder = try MigrationFolder(["0001_a.sql": "SELECT 1;", "0003_c.sql": "SELECT 3;"])
        try await database.withPool(size: 1) { pool in
            try await folder.runner(pool).up()
            try folder.write("0002_b.sql", "CREATE TABLE late (n int);")
            await #expect { try await folder.runner(pool).up() } throws: { error in
                let error = error as! MigrationError
                return error.code == .outOfOrder && error.message.contains("0002_b.sql")
            }
            #expect(try await tableExists(pool, "late") == false)
        }
    }

    @Test func baselineRecordsWithoutRunningThenUpAppliesTheRest() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        let folder = try MigrationFolder([
            "0001_existing.sql": "CREATE TABLE existing (n int);",
            "0002_existing_too.sql": "CREATE TABLE existing_too (n int);",
            "0003_new.sql": "CREATE TABLE brand_new (n int);",
        ])
        try await database.withPool(size: 1) { pool in
            // The database was built some other way: only the first table exists.
            try await pool.withConnection { try await $0.query("CREATE TABLE existing (n int)") }
            let baselined = try await folder.runner(pool).baseline(version: 2)
            #expect(baselined.map(\.version) == [1, 2])
            #expect(try await tableExists(pool, "existing_too") == false)
            let methods = try await pool.withConnection { try await $0.query("SELECT method FROM habitsync_schema_migrations ORDER BY version").rows.map { try $0.decode("method", as: String.self) } }
            #expect(methods == ["baseline", "baseline"])
            let up = try await folder.runner(pool).up()
            #expect(up.applied.map(\.version) == [3])
            #expect(try await tableExists(pool, "brand_new"))
            // A second baseline over recorded versions is refused.
            await #expect { try await folder.runner(pool).baseline(version: 2) } throws: { ($0 as! MigrationError).code == .baselineRefused }
        }
    }

    @Test func aDatabaseAheadOfTheBinaryIsToleratedWithoutProblems() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        let newer = try MigrationFolder(["0001_a.sql": "CREATE TABLE a (n int);", "0002_b.sql": "CREATE TABLE b (n int);"])
        let older = try MigrationFolder(["0001_a.sql": "CREATE TABLE a (n int);"])
        try await database.withPool(size: 1) { pool in
            try await newer.runner(pool).up()
            let runner = try older.runner(pool)
            let status = try await runner.validate()
            #expect(status.databaseIsAhead)
            #expect(status.problems.isEmpty)
            #expect(status.entries.last?.state == .unknownToBinary)
            let result = try await runner.up()
            #expect(result.applied.isEmpty)
        }
    }

    @Test func dryRunReportsPendingFilesAndChangesNothing() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        let folder = try MigrationFolder(["0001_a.sql": "CREATE TABLE a (n int);", "0002_b.sql": "CREATE TABLE b (n int);"])
        try await database.withPool(size: 1) { pool in
            let dry = try await folder.runner(pool).up(dryRun: true)
            #expect(dry.applied.map(\.version) == [1, 2])
            #expect(try await tableExists(pool, "habitsync_schema_migrations") == false)
            #expect(try await tableExists(pool, "a") == false)
            let partial = try await folder.runner(pool).up(to: 1)
            #expect(partial.applied.map(\.version) == [1])
            #expect(try await historyVersions(pool) == [1])
        }
    }

    @Test func aMigrationStuckBehindALockFailsCleanlyAtItsLockTimeout() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        let folder = try MigrationFolder(["0001_table.sql": "CREATE TABLE busy (n int);"])
        try await database.withPool(size: 2) { pool in
            try await folder.runner(pool).up()
            try folder.write("0002_alter.sql", "ALTER TABLE busy ADD COLUMN m int;")
            let holder = database.pool(size: 1)
            let lockHeld = AsyncStream<Void>.makeStream()
            let release = AsyncStream<Void>.makeStream()
            // The holder keeps its lock until the runner has given up: the runner can only
            // finish by its lock timeout, however slow the machine is.
            async let holding: Void = holder.withTransaction { connection in
                try await connection.query("LOCK TABLE busy IN ACCESS SHARE MODE")
                lockHeld.continuation.yield()
                for await _ in release.stream { break }
            }
            for await _ in lockHeld.stream { break }
            await #expect { try await folder.runner(pool, lockTimeout: .milliseconds(200)).up() } throws: { error in
                guard let error = error as? MigrationError else { return false }
                return error.code == .statementFailed && error.message.contains("55P03") && error.message.contains("0002_alter.sql")
            }
            release.continuation.yield()
            try await holding
            holder.close()
            await holder.shutdownThreads()
            #expect(try await historyVersions(pool) == [1])
        }
    }

    @Test func migrationFileNamesAreChecked() throws {
        let folder = try MigrationFolder(["0001_ok_name.sql": "SELECT 1;"])
        #expect(try MigrationDirectory(url: folder.url).files.first?.name == "ok_name")
        try folder.write("7_bad.sql", "SELECT 1;")
        #expect { try MigrationDirectory(url: folder.url) } throws: { ($0 as! MigrationError).code == .invalidFileName }
        try folder.remove("7_bad.sql")
        try folder.write("0001_duplicate.sql", "SELECT 1;")
        #expect { try MigrationDirectory(url: folder.url) } throws: { ($0 as! MigrationError).code == .duplicateVersion }
    }
}
