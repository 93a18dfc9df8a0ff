import Foundation
import HabitSyncAuth
import HabitSyncServer
import HabitSyncStore
import Logging
import TestSupport
import Testing

/// The admin commands as admins run them: the real binary against a real database.
@Suite struct TenantCommandTests {
    @Test func createListMintAndRotateThroughTheCommandLine() async throws {
        let database = try await TestPostgres.shared.migratedDatabase()
        let env = ["DATABASE_URL": database.connectionString]

        let created = try await HabitSyncBinary.run(["tenant", "create", "acme"], environment: env)
        #expect(created.status == 0, "\(created.stderr)")
        let tenantID = try #require(UUID(uuidString: created.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "stdout: \(created.stdout)")

        let json = try await HabitSyncBinary.run(["tenant", "create", "globex", "--hs256-secret", String(repeating: "s", count: 40), "--json"], environment: env)
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect(object?["algorithm"] as? String == "HS256")
        #expect(object?["hs256Secret"] == nil, "a given secret is not echoed")

        let duplicate = try await HabitSyncBinary.run(["tenant", "create", "acme"], environment: env)
        #expect(duplicate.status == 1)
        #expect(duplicate.stderr.contains("already exists"))

        let list = try await HabitSyncBinary.run(["tenant", "list", "--json"], environment: env)
        let tenants = try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]] ?? []
        #expect(tenants.compactMap { $0["name"] as? String } == ["acme", "globex"])

        let minted = try await HabitSyncBinary.run(["token", "mint", "--tenant", "acme", "--user", "u-1", "--ttl", "15m"], environment: env)
        #expect(minted.status == 0, "\(minted.stderr)")
        let token = minted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(token.split(separator: ".").count == 3)

        try await database.withPool(size: 2, role: "habitsync_app") { pool in
            let authenticator = Authenticator(tenants: TenantStore(pool: pool), cacheLifetime: .zero)
            let identity = try await authenticator.authenticate(authorization: "Bearer \(token)", logger: Logger(label: "t"))
            #expect(identity?.tenantID == tenantID)
            #expect(identity?.userID == "u-1")

            let rotated = try await HabitSyncBinary.run(["tenant", "rotate-key", "acme"], environment: env)
            #expect(rotated.status == 0, "\(rotated.stderr)")
            #expect(try await authenticator.authenticate(authorization: "Bearer \(token)", logger: Logger(label: "t")) == nil)
        }

        let unknown = try await HabitSyncBinary.run(["token", "mint", "--tenant", "nobody", "--user", "u"], environment: env)
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("no tenant 'nobody'"))
        let badTTL = try await HabitSyncBinary.run(["token", "mint", "--tenant", "acme", "--user", "u", "--ttl", "soon"], environment: env)
        #expect(badTTL.status != 0)
        #expect(badTTL.stderr.contains("--ttl"))
    }
}
