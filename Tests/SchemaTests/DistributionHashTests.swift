import Foundation
import LibPQClient
import TestSupport
import Testing

@testable import HabitSyncStore

/// The server finds a user's Citus node by hashing the user id itself (`DistributionHash`): it
/// must be PostgreSQL's `hashtext` (what Citus' `worker_hash` computes for a text
/// distribution column) for every string a token can carry, or a user's requests would go to
/// a node that does not hold them.
@Suite struct DistributionHashTests {
    @Test func theHashIsPostgreSQLsHashtextForEveryKindOfString() async throws {
        var users = [
            "", "a", "ab", "abc", "abcd", "check-in-3-20C17B", "user-1", "café", "cafe\u{301}", "K", "\u{212A}", "日本語テキスト", "🙂👍🏽",
            "with\ttab", "trailing newline\n", String(repeating: "x", count: 10_000), "\u{7F}", "\u{FFFD}", "\u{10FFFF}",
        ]
        // Every length from 0 to 40 (the 12-byte blocks and each tail length), and random
        // strings of every script.
        users += (0...40).map { String(repeating: "é", count: $0 / 2) + String(repeating: "z", count: $0 % 2) }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            let length = Int.random(in: 0...64, using: &generator)
            let scalars = (0..<length).compactMap { _ in Unicode.Scalar(UInt32.random(in: 1...0x2FFFF, using: &generator)) }
            users.append(String(String.UnicodeScalarView(scalars)))
        }
        let database = try await TestPostgres.shared.migratedDatabase()
        try await database.withPool(size: 1) { pool in
            let rows = try await pool.withConnection { connection in
                try await connection.query("SELECT u.id, u.n, hashtext(u.id) AS postgres FROM unnest(\(users)::text[]) WITH ORDINALITY AS u(id, n) ORDER BY u.n").rows
            }
            #expect(rows.count == users.count)
            for row in rows {
                let user = try row.decode("id", as: String.self)
                #expect(DistributionHash.of(Array(user.utf8)) == (try row.decode("postgres", as: Int32.self)), "\(user.debugDescription.prefix(80))")
            }
        }
    }
}
