import Foundation
import LibPQClient

/// The history table: one row per applied (or baselined) migration, written in the same
/// transaction as the migration itself.
public struct AppliedMigration: Sendable, Equatable {
    public let version: Int
    public let name: String
    public let checksum: String
    public let appliedAt: Date
    public let durationMilliseconds: Int
    public let appliedBy: String
    /// `applied`, or `baseline` when `migrate baseline` adopted it without running it.
    public let method: String
}

enum MigrationHistory {
    static let table = "habitsync_schema_migrations"

    static let createTableSQL = """
        CREATE TABLE IF NOT EXISTS habitsync_schema_migrations (
            version     integer PRIMARY KEY CHECK (version > 0),
            name        text NOT NULL,
            checksum    text NOT NULL CHECK (checksum ~ '^[0-9a-f]{64}$'),
            applied_at  timestamptz NOT NULL DEFAULT now(),
            duration_ms integer NOT NULL DEFAULT 0 CHECK (duration_ms >= 0),
            applied_by  text NOT NULL DEFAULT current_user,
            method      text NOT NULL DEFAULT 'applied' CHECK (method IN ('applied', 'baseline'))
        );
        COMMENT ON TABLE habitsync_schema_migrations IS 'Schema migrations applied to this database by habitsync-server (migrate up / serve --migrate auto).';
        COMMENT ON COLUMN habitsync_schema_migrations.version IS 'Version number, from the file name prefix (0001_… is 1).';
        COMMENT ON COLUMN habitsync_schema_migrations.name IS 'Description part of the file name.';
        COMMENT ON COLUMN habitsync_schema_migrations.checksum IS 'Hex SHA-256 of the file as applied; an edited file no longer matches and is refused.';
        COMMENT ON COLUMN habitsync_schema_migrations.applied_at IS 'When the migration committed.';
        COMMENT ON COLUMN habitsync_schema_migrations.duration_ms IS 'How long the migration took to run, in milliseconds.';
        COMMENT ON COLUMN habitsync_schema_migrations.applied_by IS 'Database role that applied it.';
        COMMENT ON COLUMN habitsync_schema_migrations.method IS 'applied (ran) or baseline (recorded by migrate baseline without running).'
        """

    static let tableExists: PGQuery = "SELECT to_regclass('habitsync_schema_migrations') IS NOT NULL AS present"

    static let selectAll: PGQuery = """
        SELECT version, name, checksum, applied_at, duration_ms, applied_by, method
        FROM habitsync_schema_migrations ORDER BY version
        """

    static func insert(_ file: MigrationFile, durationMilliseconds: Int, method: String) -> PGQuery {
        """
        INSERT INTO habitsync_schema_migrations (version, name, checksum, duration_ms, method)
        VALUES (\(file.version), \(file.name), \(file.checksum), \(durationMilliseconds), \(method))
        """
    }

    static func read(_ connection: PGConnection) async throws -> [AppliedMigration] {
        let exists = try await connection.query(tableExists).single().decode("present", as: Bool.self)
        guard exists else { return [] }
        return try await connection.query(selectAll).rows.map { row in
            AppliedMigration(
                version: try row.decode("version"), name: try row.decode("name"), checksum: try row.decode("checksum"),
                appliedAt: try row.decode("applied_at"), durationMilliseconds: try row.decode("duration_ms"),
                appliedBy: try row.decode("applied_by"), method: try row.decode("method"))
        }
    }
}
