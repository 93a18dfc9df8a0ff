import EmbeddedPostgres
import Foundation
import LibPQClient
import ServerHarness

/// A backup as an operator takes and restores one: `pg_dump --format=custom`, then
/// `pg_restore` into a new database.
extension TestPostgres {
    public struct Backup: Sendable {
        public let file: URL
    }

    public func backUp(_ database: TestDatabase) async throws -> Backup {
        let file = try makeTemporaryDirectory("habitsync-backup").appendingPathComponent("dump")
        let dumped = try await HabitSyncBinary.run(executable: try Self.tool("pg_dump"), ["--format=custom", "--file", file.path, "--dbname", database.connectionString])
        guard dumped.status == 0 else { throw HarnessError("pg_dump failed: \(dumped.stderr)") }
        return Backup(file: file)
    }

    /// A new database holding what `backup` held.
    public func restore(_ backup: Backup) async throws -> TestDatabase {
        let database = try await emptyDatabase()
        let restored = try await HabitSyncBinary.run(executable: try Self.tool("pg_restore"), ["--exit-on-error", "--dbname", database.connectionString, backup.file.path])
        guard restored.status == 0 else { throw HarnessError("pg_restore failed: \(restored.stderr)") }
        return database
    }

    static func tool(_ name: String) throws -> URL {
        URL(fileURLWithPath: try PostgresBinaries.locate().path(name))
    }
}
