import Foundation
import HabitSyncAuth
import HabitSyncStore
import LibPQClient
import TestSupport
import Testing

/// `IssuerRules` (what `tenant add-issuer` accepts) and `tenant_issuers`' CHECKs (migration
/// 0027) give the same verdict on every edge value: each is inserted as is, bypassing Swift.
@Suite struct IssuerRulesParityTests {
    /// Characters at the edges of "space or control": C0, space, DEL, C1, NBSP, Unicode's
    /// other spaces, and look-alikes that are neither (zero-width space, BOM, é, a combining
    /// mark, an emoji).
    static let edgeScalars: [Unicode.Scalar] = [
        "\u{1}", "\u{9}", "\u{A}", "\u{1F}", " ", "~", "\u{7F}", "\u{80}", "\u{85}", "\u{9F}", "\u{A0}", "\u{A1}", "\u{1680}", "\u{2000}",
        "\u{200A}", "\u{200B}", "\u{2028}", "\u{2029}", "\u{202F}", "\u{205F}", "\u{3000}", "\u{FEFF}", "é", "\u{301}", "🦊", "/", ":", "_", ".", "-", "$",
    ]

    static func issuers() -> [String] {
        var values = ["https://a", "http://a", "https://", "HTTPS://a", "https:/a", "ftp://a", "", "https://a\n", "\nhttps://a"]
        for scalar in edgeScalars { values.append("https://a\(scalar)b") }
        for length in [511, 512, 513] { values.append("https://" + String(repeating: "a", count: length - 8)) }
        values.append("https://" + String(repeating: "é", count: 504))
        values.append("https://" + String(repeating: "é", count: 505))
        return values
    }

    static func audiences() -> [[String]] {
        var values: [[String]] = [
            ["a"], [""], [String(repeating: "a", count: 512)], [String(repeating: "a", count: 513)],
            [String(repeating: "é", count: 512)], Array(repeating: "a", count: 20), Array(repeating: "a", count: 21), ["a", ""],
        ]
        for scalar in edgeScalars { values.append(["a\(scalar)b"]) }
        return values
    }

    static func userClaims() -> [String] {
        var values = ["sub", "", String(repeating: "a", count: 64), String(repeating: "a", count: 65), "custom:tenant_user.id-1", "a\n"]
        for scalar in edgeScalars { values.append("a\(scalar)b") }
        return values
    }

    /// Whether the database stores the row.
    static func stored(_ pool: PGPool, tenant: UUID, issuer: String, audiences: [String], userClaim: String) async -> Bool {
        do {
            try await pool.withTransaction { connection in
                try await RequestScope.set(on: connection, tenantID: tenant, userID: nil)
                try await connection.query(
                    """
                    INSERT INTO tenant_issuers (tenant_id, issuer, key_source, audiences, user_claim)
                    VALUES (\(tenant), \(issuer), 'discovery', \(audiences), \(userClaim))
                    """)
            }
            return true
        } catch {
            return false
        }
    }

    static func swiftAccepts(issuer: String, audiences: [String], userClaim: String) -> Bool {
        (try? IssuerConfiguration(issuer: issuer, keySource: .discovery, audiences: audiences, userClaim: userClaim)) != nil
    }

    @Test func swiftAndTheChecksAgreeOnEveryEdgeValue() async throws {
        let database = try await TestPostgres.shared.migratedDatabase()
        try await database.withPool(size: 1) { pool in
            let tenant = try await TenantStore(pool: pool).create(name: "parity", key: TenantKey.generatedSecret()).id
            var compared = 0
            var accepted = 0
            for issuer in Self.issuers() {
                let swift = Self.swiftAccepts(issuer: issuer, audiences: ["a"], userClaim: "sub")
                let sql = await Self.stored(pool, tenant: tenant, issuer: issuer, audiences: ["a"], userClaim: "sub")
                #expect(swift == sql, "issuer \(issuer.unicodeScalars.map { String($0.value, radix: 16) }.suffix(4)) (\(issuer.unicodeScalars.count) scalars): Swift \(swift), SQL \(sql)")
                compared += 1
                if sql { accepted += 1 }
            }
            for (index, audiences) in Self.audiences().enumerated() {
                let issuer = "https://audience-\(index).example"
                let swift = Self.swiftAccepts(issuer: issuer, audiences: audiences, userClaim: "sub")
                let sql = await Self.stored(pool, tenant: tenant, issuer: issuer, audiences: audiences, userClaim: "sub")
                #expect(swift == sql, "audiences #\(index) \(audiences.first?.unicodeScalars.map { String($0.value, radix: 16) }.prefix(3) ?? []): Swift \(swift), SQL \(sql)")
                compared += 1
                if sql { accepted += 1 }
            }
            for (index, claim) in Self.userClaims().enumerated() {
                let issuer = "https://claim-\(index).example"
                let swift = Self.swiftAccepts(issuer: issuer, audiences: ["a"], userClaim: claim)
                let sql = await Self.stored(pool, tenant: tenant, issuer: issuer, audiences: ["a"], userClaim: claim)
                #expect(swift == sql, "user claim \(claim.unicodeScalars.map { String($0.value, radix: 16) }): Swift \(swift), SQL \(sql)")
                compared += 1
                if sql { accepted += 1 }
            }
            // Both verdicts occur: the comparison is not vacuous.
            #expect(compared > 100 && accepted > 20 && accepted < compared - 20, "\(accepted) of \(compared) accepted")
        }
    }
}
