import Foundation
import LibPQClient
import SyncTestSupport
import TestSupport
import Testing

/// `habitsync-server import-legacy` on the two fixtures, as an admin runs it.
@Suite struct LegacyImportTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/legacy")

    static func snapshot(_ world: SyncWorld) async throws -> [String] {
        try await world.database.withPool(size: 1) { pool in
            try await pool.withConnection { connection in
                try await connection.query(
                    """
                    SELECT 'habits ' || id || ' ' || server_version || ' ' || habitsync_habit_record(h)::text AS row FROM habits h
                    UNION ALL SELECT 'reminders ' || id || ' ' || server_version || ' ' || habitsync_reminder_record(r)::text FROM reminders r
                    UNION ALL SELECT 'progress ' || habit_id || ' ' || date || ' ' || server_version || ' ' || progress_count || ' ' || goal_count FROM daily_progress
                    UNION ALL SELECT 'xp ' || date || ' ' || amount FROM xp_transactions
                    UNION ALL SELECT 'streak ' || habitsync_global_streak_record(g)::text FROM global_streaks g
                    UNION ALL SELECT 'archive ' || source_sha256 || ' ' || position FROM legacy_import_archive
                    UNION ALL SELECT 'migration ' || name || ' ' || status FROM data_migrations
                    ORDER BY 1
                    """
                ).rows.map { try $0.decode("row", as: String.self) }
            }
        }
    }

    @Test func bothFixturesImportOnceAndAgainChangeNothing() async throws {
        let world = try await SyncWorld.make()
        let env = ["DATABASE_URL": world.database.connectionString]
        let files = ["formation-numeric-dates.json", "breaking-iso-dates.json"].map { Self.fixtures.appendingPathComponent($0).path }

        for file in files {
            let dry = try await HabitSyncBinary.run(["import-legacy", "--tenant", "acme", "--user", "bob", file, "--dry-run", "--json"], environment: env)
            #expect(dry.status == 0, "\(dry.stderr)")
            #expect(dry.stdout.contains("\"dryRun\":true"))
        }
        #expect(try await Self.snapshot(world).isEmpty, "a dry run writes nothing")

        for file in files {
            let run = try await HabitSyncBinary.run(["import-legacy", "--tenant", "acme", "--user", "bob", file, "--json"], environment: env)
            #expect(run.status == 0, "\(run.stderr)")
            let report = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
            #expect(report?["alreadyImported"] as? Bool == false)
            #expect((report?["written"] as? Int ?? 0) > 10)
        }
        let once = try await Self.snapshot(world)
        #expect(once.filter { $0.hasPrefix("habits ") }.count == 2)
        #expect(once.filter { $0.hasPrefix("progress ") }.count == 20)
        #expect(once.filter { $0.hasPrefix("archive ") }.count == 2)
        #expect(once.filter { $0.hasPrefix("migration ") && $0.hasSuffix(" completed") }.count == 2)
        #expect(once.contains { $0.hasPrefix("streak ") }, "derived state was computed from the imported history")
        #expect(try await world.count("legacy_import_archive", where: "source->>'name' = 'Evening Walk' AND source ? 'completionStatus'") == 1, "the original object is archived whole")

        for file in files {
            let again = try await HabitSyncBinary.run(["import-legacy", "--tenant", "acme", "--user", "bob", file], environment: env)
            #expect(again.status == 0)
            #expect(again.stdout.contains("already imported"))
        }
        let twice = try await Self.snapshot(world)
        // Derived records may be recomputed for a new day; the imported rows are identical.
        #expect(twice.filter { !$0.hasPrefix("streak ") } == once.filter { !$0.hasPrefix("streak ") })
    }

    @Test func anUnparseableFileWritesNothingAndNamesTheProblem() async throws {
        let world = try await SyncWorld.make()
        let directory = try makeTemporaryDirectory("legacy")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("bad.json")
        try Data(
            """
            {"format":"habitto.legacy-habits","formatVersion":1,"source":{"dateEncoding":"iso8601"},"userTimeZone":"UTC","habits":[
             {"id":"11111111-2222-3333-4444-555555555555","name":"Fine","description":"","icon":"None","color":"FF8800","habitType":"Habit Building",
              "schedule":"Everyday","goal":"1 time everyday","reminder":"","startDate":"2026-03-01T00:00:00Z"},
             {"id":"21111111-2222-3333-4444-555555555555","name":"Broken","description":"","icon":"None","color":"FF8800","habitType":"Habit Building",
              "schedule":"when the moon is full","goal":"1 time","reminder":"","startDate":"2026-03-01T00:00:00Z"}]}
            """.utf8
        ).write(to: file)
        let run = try await HabitSyncBinary.run(["import-legacy", "--tenant", "acme", "--user", "bob", file.path], environment: ["DATABASE_URL": world.database.connectionString])
        #expect(run.status == 1)
        #expect(run.stderr.contains("Broken") && run.stderr.contains("schedule") && run.stderr.contains("when the moon is full"))
        #expect(try await world.count("habits") == 0)
        #expect(try await world.count("data_migrations") == 0)
    }
}
