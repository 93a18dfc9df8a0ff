import Foundation
import TestSupport
import Testing

@testable import LibPQClient

/// A routed transaction names a user's shards instead of the distributed tables (issue 47):
/// only the table names are replaced, never a literal, a quoted name, a comment, a column or a
/// type that happens to be spelled the same.
@Suite struct RelationNamesTests {
    let names = PGRelationNames(["habits": "habits_102008", "users": "users_102040", "daily_progress": "daily_progress_102072"])

    @Test(arguments: [
        ("SELECT * FROM habits WHERE id = 1", "SELECT * FROM habits_102008 WHERE id = 1"),
        ("INSERT INTO public.habits AS h (id) VALUES (1)", "INSERT INTO public.habits_102008 AS h (id) VALUES (1)"),
        ("UPDATE users SET x = 1 FROM habits h WHERE users.id = h.user_id", "UPDATE users_102040 SET x = 1 FROM habits_102008 h WHERE users_102040.id = h.user_id"),
        ("SELECT h.habits, 'habits' FROM \"habits\" h", "SELECT h.habits, 'habits' FROM \"habits_102008\" h"),
        ("SELECT f(ROW(h.*)::\"habits\") FROM public.\"habits\" h", "SELECT f(ROW(h.*)::\"habits\") FROM public.\"habits_102008\" h"),
        ("SELECT 'it''s habits' FROM habits", "SELECT 'it''s habits' FROM habits_102008"),
        ("SELECT f(ROW(x.*)::habits) FROM habits x", "SELECT f(ROW(x.*)::habits) FROM habits_102008 x"),
        ("INSERT INTO habits (id) SELECT habits_count FROM daily_progress", "INSERT INTO habits_102008 (id) SELECT habits_count FROM daily_progress_102072"),
        ("-- habits\nSELECT 1 FROM /* users */ users", "-- habits\nSELECT 1 FROM /* users */ users_102040"),
        ("SELECT $q$ FROM habits $q$, $1 FROM habits", "SELECT $q$ FROM habits $q$, $1 FROM habits_102008"),
        ("DELETE FROM daily_progress WHERE user_id = 'users'", "DELETE FROM daily_progress_102072 WHERE user_id = 'users'"),
        ("SELECT Ähabits FROM habits", "SELECT Ähabits FROM habits_102008"),
    ])
    func onlyTheTablesAreRenamed(original: String, expected: String) {
        #expect(names.rename(original) == expected)
    }

    @Test func theBindsStayAndEachPieceIsRenamed() {
        let query: PGQuery = "SELECT id FROM habits WHERE user_id = \("u1") AND id IN (SELECT habit_id FROM daily_progress WHERE n > \(Int32(3)))"
        let renamed = names.apply(to: query)
        #expect(renamed.sql == "SELECT id FROM habits_102008 WHERE user_id = $1 AND id IN (SELECT habit_id FROM daily_progress_102072 WHERE n > $2)")
        #expect(renamed.binds.count == 2)
        #expect(names.apply(to: query).sql == renamed.sql, "the second time from the cache")
    }

    /// On a real server: a transaction's statements reach the renamed table, prepared as
    /// statements of their own, and the next transaction on the same connection names the
    /// original again.
    @Test func aTransactionsStatementsUseTheNamesAndTheNextDoesNot() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        try await database.withPool(size: 1) { pool in
            try await pool.withConnection { connection in
                try await connection.simpleQuery(unsafeSQL: "CREATE TABLE habits (n int); CREATE TABLE habits_102008 (n int); INSERT INTO habits VALUES (1); INSERT INTO habits_102008 VALUES (2)")
            }
            let query: PGQuery = "SELECT n FROM habits WHERE n > \(Int32(0))"
            let routed = try await pool.withTransaction(relationNames: names) { connection in
                let one = try await connection.query(query).single().decode("n", as: Int.self)
                let piped = try await connection.pipeline([query], commit: true)
                return [one, try piped[0].single().decode("n", as: Int.self)]
            }
            #expect(routed == [2, 2])
            let plain = try await pool.withTransaction { try await $0.query(query).single().decode("n", as: Int.self) }
            #expect(plain == 1)
        }
    }
}
