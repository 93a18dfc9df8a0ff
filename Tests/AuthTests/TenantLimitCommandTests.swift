import Foundation
import TestSupport
import Testing

/// `tenant set-limits` and `tenant show` as admins run them: the real binary against a real
/// database; a bad value is refused with its rule and changes nothing.
@Suite struct TenantLimitCommandTests {
    @Test func setShowLiftAndRefuse() async throws {
        let database = try await TestPostgres.shared.migratedDatabase()
        let env = ["DATABASE_URL": database.connectionString]
        #expect(try await HabitSyncBinary.run(["tenant", "create", "acme"], environment: env).status == 0)

        func show() async throws -> [String: Any] {
            let shown = try await HabitSyncBinary.run(["tenant", "show", "acme", "--json"], environment: env)
            #expect(shown.status == 0, "\(shown.stderr)")
            let object = try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any]
            return object?["limits"] as? [String: Any] ?? [:]
        }
        // None at first: every kind null.
        let none = try await show()
        #expect(none.count == 5 && none.values.allSatisfy { $0 is NSNull }, "\(none)")

        let set = try await HabitSyncBinary.run(
            ["tenant", "set-limits", "acme", "--pushes-per-second", "50", "--records-per-day", "1000000", "--storage-rows", "2000000"], environment: env)
        #expect(set.status == 0, "\(set.stderr)")
        #expect(set.stdout.contains("pushes-per-second") && set.stdout.contains("50") && set.stdout.contains("streams              none"), "\(set.stdout)")
        var limits = try await show()
        #expect(limits["pushesPerSecond"] as? Int == 50 && limits["recordsPerDay"] as? Int == 1_000_000 && limits["storageRows"] as? Int == 2_000_000)
        #expect(limits["streams"] is NSNull && limits["recordsPerSecond"] is NSNull)

        // One changed, the others kept; `none` lifts one.
        #expect(try await HabitSyncBinary.run(["tenant", "set-limits", "acme", "--streams", "10", "--pushes-per-second", "none"], environment: env).status == 0)
        limits = try await show()
        #expect(limits["streams"] as? Int == 10 && limits["pushesPerSecond"] is NSNull && limits["recordsPerDay"] as? Int == 1_000_000)

        // Refused with the rule; nothing changes.
        for bad in ["0", "-1", "1e308", "5.5", " 5", "5\n", "lots", String(repeating: "9", count: 10_000)] {
            let refused = try await HabitSyncBinary.run(["tenant", "set-limits", "acme", "--streams=\(bad)"], environment: env)
            #expect(refused.status != 0, "took \(bad.debugDescription)")
            #expect(refused.stderr.contains("--streams must be a whole number from 1 to 10000000, or none"), "\(refused.stderr)")
        }
        let nothing = try await HabitSyncBinary.run(["tenant", "set-limits", "acme"], environment: env)
        #expect(nothing.status != 0 && nothing.stderr.contains("give at least one limit"))
        let unknown = try await HabitSyncBinary.run(["tenant", "set-limits", "nobody", "--streams", "1"], environment: env)
        #expect(unknown.status == 1 && unknown.stderr.contains("no tenant 'nobody'"))
        #expect(try await show()["streams"] as? Int == 10)
    }
}
