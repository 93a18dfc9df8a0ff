import Foundation
import LibPQClient
import ServerHarness
import Testing
import TestSupport

/// What a newcomer met on the way (issue 10): a method a route lacks, an admin command on a
/// database that was never migrated, and the statistics' JSON style.
@Suite struct NewcomerPolishTests {
    @Test func aKnownPathAskedWithAnotherMethodIs405WithAllow() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            for (method, path, allow) in [("PUT", "/v1/sync/push", "POST"), ("GET", "/v1/sync/push", "POST"), ("TRACE", "/livez", "GET"),
                                          ("DELETE", "/v1/sync/pull", "GET"), ("POST", "/v1/stats/habits", "GET")] {
                let reply = try await TestHTTP.request(method, server.baseURL + path)
                #expect(reply.status == 405, "\(method) \(path): \(reply.status)")
                #expect(reply.header("Allow") == allow, "\(method) \(path)")
                #expect((try? reply.json())?["error"] as? [String: Any] != nil)
            }
            #expect(try await TestHTTP.request("GET", server.baseURL + "/v1/nothing-here").status == 404)
        }
    }

    @Test func anAdminCommandOnAnUnmigratedDatabaseNamesMigrateUp() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        let run = try await HabitSyncBinary.run(["tenant", "create", "acme"], environment: ["DATABASE_URL": database.connectionString])
        #expect(run.status == 1)
        #expect(run.stderr.contains("migrate up"), "\(run.stderr)")
    }

    @Test func statisticsAreCompactJSONLikeEveryOtherResponse() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let device = try await world.client(server, user: "alice")
            let habit = UUID()
            _ = try await device.push([Wire.change("habits", habit, at: Wire.at(0), record: Wire.habit()),
                                       Wire.change("dailyProgress", UUID(), at: Wire.at(0), record: Wire.progress(habit: habit, count: 10))])
            let token = try await world.token(user: "alice")
            for path in ["/v1/stats/habits?from=2026-11-01&to=2026-11-20", "/v1/stats/focus", "/v1/stats/usage"] {
                let reply = try await TestHTTP.request("GET", server.baseURL + path, headers: ["Authorization": "Bearer \(token)"])
                #expect(reply.status == 200)
                #expect(!reply.text.contains(" : ") && !reply.text.contains(", \""), "\(path): \(reply.text.prefix(120))")
                #expect((try? reply.json()) != nil)
            }
        }
    }
}
