import Foundation
import LibPQClient
import TestSupport
import Testing

/// `schema/` is the schema the migrations build, so a reader finds the function body, trigger
/// or policy that runs without replaying every migration in their head.
@Suite struct SchemaPictureTests {
    static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent(SchemaPicture.folderName)

    /// `scripts/refresh-schema` sets it: the test writes the picture instead of comparing.
    static let refreshing = ProcessInfo.processInfo.environment["HABITSYNC_REFRESH_SCHEMA"] == "1"

    @Test(.enabled(if: !TestPostgres.onCitus, "the picture is of a plain PostgreSQL database"))
    func theCheckedInPictureIsWhatTheMigrationsBuild() async throws {
        let generated = try await Self.picture(of: TestPostgres.shared.migratedDatabase())
        if Self.refreshing {
            try? FileManager.default.removeItem(at: Self.folder)
            try Self.write(generated, to: Self.folder)
            return
        }
        let checkedIn = try Self.read(Self.folder)
        guard generated != checkedIn else { return }
        let scratch = try makeTemporaryDirectory("schema-picture")
        defer { try? FileManager.default.removeItem(at: scratch) }
        try Self.write(generated, to: scratch)
        Issue.record(
            """
            schema/ is not what the migrations build (- checked in, + built):
            \(try Self.diff(Self.folder, scratch))
            Run \(SchemaPicture.refreshCommand) and commit schema/ with the migration.
            """)
    }

    /// The comparison sees a changed body, and does not see a new month's partition.
    @Test(.enabled(if: !TestPostgres.onCitus, "the picture is of a plain PostgreSQL database"))
    func aChangedFunctionShowsAndANewMonthDoesNot() async throws {
        let database = try await TestPostgres.shared.migratedDatabase()
        let before = try await Self.picture(of: database)
        try await database.withPool(size: 1) { pool in
            try await pool.withConnection { connection in
                try await connection.simpleQuery(
                    unsafeSQL: """
                        CREATE OR REPLACE FUNCTION habitsync_wire_date(d date) RETURNS text LANGUAGE sql IMMUTABLE
                        AS $$ SELECT to_char(d, 'YYYY-MM-DD') || '' $$;
                        CREATE TABLE usage_events_2199_01 PARTITION OF usage_events FOR VALUES FROM ('2199-01-01') TO ('2199-02-01');
                        """)
            }
        }
        let after = try await Self.picture(of: database)
        let changed = Set(before.keys).union(after.keys).filter { before[$0] != after[$0] }
        #expect(changed == ["functions/public.habitsync_wire_date.sql"])
        #expect(after["functions/public.habitsync_wire_date.sql"]?.contains("|| ''") == true)
        #expect(before["tables/public.usage_events.sql"]?.contains("PARTITION BY RANGE (occurred_at)") == true)
    }

    static func picture(of database: TestDatabase) async throws -> [String: String] {
        try await database.withPool(size: 1) { pool in
            try await pool.withConnection { try await SchemaPicture.files($0) }
        }
    }

    static func write(_ files: [String: String], to folder: URL) throws {
        for (path, text) in files {
            let file = folder.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: file)
        }
    }

    static func read(_ folder: URL) throws -> [String: String] {
        var files: [String: String] = [:]
        guard let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey]) else { return files }
        let root = folder.standardizedFileURL.path + "/"
        for case let file as URL in walker where (try file.resourceValues(forKeys: [.isRegularFileKey])).isRegularFile == true {
            files[String(file.standardizedFileURL.path.dropFirst(root.count))] = try String(contentsOf: file, encoding: .utf8)
        }
        return files
    }

    /// `diff -ru` of the two folders, cut to a readable length.
    static func diff(_ checkedIn: URL, _ built: URL) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/diff")
        process.arguments = ["-ruN", checkedIn.path, built.path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        return text.count > 20_000 ? String(text.prefix(20_000)) + "\n… (cut)" : text
    }
}
