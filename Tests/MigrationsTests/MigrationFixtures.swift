import Foundation
import LibPQClient
import Migrations
import TestSupport

/// A migrations folder written by a test, removed with the last reference to it.
final class MigrationFolder: Sendable {
    let url: URL

    init(_ files: [String: String]) throws {
        url = try makeTemporaryDirectory("habitsync-migrations")
        for (name, sql) in files { try write(name, sql) }
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// The repository's real migrations, plus extra files.
    static func real(adding extra: [String: String] = [:]) throws -> MigrationFolder {
        let folder = try MigrationFolder([:])
        for name in try FileManager.default.contentsOfDirectory(atPath: TestPostgres.migrationsDirectory.path) where name.hasSuffix(".sql") {
            try FileManager.default.copyItem(at: TestPostgres.migrationsDirectory.appendingPathComponent(name), to: folder.url.appendingPathComponent(name))
        }
        for (name, sql) in extra { try folder.write(name, sql) }
        return folder
    }

    func write(_ name: String, _ sql: String) throws {
        try sql.write(to: url.appendingPathComponent(name), atomically: true, encoding: .utf8)
    }

    func remove(_ name: String) throws {
        try FileManager.default.removeItem(at: url.appendingPathComponent(name))
    }

    func runner(_ pool: PGPool, lockTimeout: Duration = .seconds(10)) throws -> MigrationRunner {
        MigrationRunner(pool: pool, directory: try MigrationDirectory(url: url), options: .init(lockTimeout: lockTimeout), logger: TestPostgres.logger)
    }
}

func historyVersions(_ pool: PGPool) async throws -> [Int] {
    try await pool.withConnection { connection in
        let exists = try await connection.query("SELECT to_regclass('habitsync_schema_migrations') IS NOT NULL AS present").single().decode("present", as: Bool.self)
        guard exists else { return [] }
        return try await connection.query("SELECT version FROM habitsync_schema_migrations ORDER BY version").rows.map { try $0.decode("version", as: Int.self) }
    }
}

func tableExists(_ pool: PGPool, _ name: String) async throws -> Bool {
    try await pool.withConnection { try await $0.query("SELECT to_regclass(\(name)) IS NOT NULL AS present").single().decode("present", as: Bool.self) }
}
