import Foundation
import HabitSyncDomain
import LibPQClient
import TestSupport
import Testing

/// The server's device name is declared once (`ServerDevice.name`, issue 48); what analysts read
/// in the catalog names the same one.
@Suite struct ServerDeviceTests {
    @Test func theCatalogNamesTheServersDeviceAsSwiftDoes() async throws {
        let database = try await TestPostgres.shared.migratedDatabase()
        try await database.withPool(size: 1) { pool in
            let comments = try await pool.withConnection { connection in
                try await connection.query(
                    """
                    SELECT c.relname AS table_name, col_description(c.oid, a.attnum) AS comment
                    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'updated_by' AND NOT a.attisdropped
                    WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND col_description(c.oid, a.attnum) ILIKE '%server%'
                    ORDER BY 1
                    """
                ).rows.map { (try $0.decode("table_name", as: String.self), try $0.decode("comment", as: String.self)) }
            }
            // habits, reminders, daily_progress, xp_transactions, focus_sessions and the three
            // derived tables say who writes as the server.
            #expect(comments.count >= 8, "\(comments)")
            // Each names it as a quoted word, and no other ('write''s' apostrophes aside).
            let quotedWord = try Regex("'([A-Za-z_]+)'")
            for (table, comment) in comments {
                let quoted = comment.matches(of: quotedWord).map { String(comment[$0.range].dropFirst().dropLast()) }
                #expect(quoted == [ServerDevice.name], "\(table): \(comment)")
            }
        }
    }

    @Test func noDeviceMayTakeTheServersName() {
        for name in [ServerDevice.name, ServerDevice.name.uppercased(), "Server", "sErVeR"] { #expect(ServerDevice.isReserved(name), "\(name)") }
        for name in ["server ", " server", "servers", "serve", "server\u{301}", "phone"] { #expect(!ServerDevice.isReserved(name), "\(name)") }
    }
}
