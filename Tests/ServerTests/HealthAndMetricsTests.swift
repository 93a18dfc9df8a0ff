import Foundation
import HabitSyncServer
import LibPQClient
import Migrations
import ServerHarness
import TestSupport
import Testing

@testable import HabitSyncCLI

@Suite struct HealthAndMetricsTests {
    @Test func livezReadyzAndMetricsAnswerOnAMigratedDatabase() async throws {
        let database = try await TestPostgres.shared.migratedDatabase()
        let head = try MigrationDirectory(url: TestPostgres.migrationsDirectory).headVersion
        try await RunningServer.with(database: database, binaryHeadVersion: head) { server in
            let live = try await server.get("/livez")
            #expect(live.status == 200)
            #expect(try await server.get("/healthz").status == 200)

            // Ready once the database answered its probe within 2 s (a first probe on a busy
            // machine may not): waited for as a load balancer does, then asked once more.
            #expect(try await TestHTTP.awaitReady(server.baseURL) == 200)
            let ready = try await server.get("/readyz")
            #expect(ready.status == 200)
            #expect(try ready.json()["schemaVersion"] as? Int == head)
            #expect(ready.header("X-Request-Id")?.isEmpty == false)

            let metrics = try await server.get("/metrics")
            #expect(metrics.status == 200)
            #expect(metrics.header("Content-Type")?.hasPrefix("text/plain") == true)
            let samples = try parsePrometheusText(metrics.text)
            #expect(samples[#"http_requests_total{method="GET",route="/readyz",status="200"}"#] == 2, "the wait's first 200 and the one asked")
            #expect(samples[#"http_requests_total{method="GET",route="/livez",status="200"}"#] == 1)
            #expect(samples["habitsync_schema_version"] == Double(head))
            #expect(samples["habitsync_db_pool_max_connections"] == 4)
            #expect(samples.keys.contains { $0.hasPrefix("http_request_duration_seconds_bucket{") })
            // No tenant or user ids as label values: only these labels exist.
            for key in samples.keys where key.contains("{") {
                let labels = key.split(separator: "{")[1].split(separator: ",").map { $0.split(separator: "=")[0] }
                #expect(labels.allSatisfy { ["method", "route", "status", "le"].contains(String($0)) }, "\(key)")
            }
        }
    }

    @Test func unknownRoutesGetAJSONErrorAndTheCallersRequestIDIsEchoed() async throws {
        let database = try await TestPostgres.shared.migratedDatabase()
        try await RunningServer.with(database: database) { server in
            let reply = try await TestHTTP.request("GET", server.baseURL + "/v1/nothing-here", headers: ["X-Request-Id": "trace-123"])
            #expect(reply.status == 404)
            #expect(reply.header("Content-Type")?.hasPrefix("application/json") == true)
            let error = try #require(try reply.json()["error"] as? [String: Any])
            #expect(error["code"] as? String == "not_found")
            #expect(reply.header("X-Request-Id") == "trace-123")
            // An unreasonable id is replaced, not echoed.
            let odd = try await TestHTTP.request("GET", server.baseURL + "/livez", headers: ["X-Request-Id": "has spaces\"and quotes"])
            #expect(odd.header("X-Request-Id") != "has spaces\"and quotes")
        }
    }

    /// `/readyz` once its probe reached the database (it gives it 2 s, which a busy machine
    /// can pass: that answer is `database_unreachable`, right then, and asked again here).
    static func readinessOnceTheDatabaseAnswered(_ server: RunningServer) async throws -> TestHTTP.Reply {
        var reply = try await server.get("/readyz")
        for _ in 0..<600 where (try? reply.json()["status"] as? String) == "database_unreachable" {
            try await Task.sleep(for: .milliseconds(100))
            reply = try await server.get("/readyz")
        }
        return reply
    }

    @Test func readyzIsNotReadyWhileShuttingDownOrWhenTheSchemaIsBehind() async throws {
        let database = try await TestPostgres.shared.migratedDatabase()
        try await RunningServer.with(database: database, binaryHeadVersion: 9999) { server in
            let behind = try await Self.readinessOnceTheDatabaseAnswered(server)
            #expect(behind.status == 503)
            #expect(try behind.json()["status"] as? String == "schema_behind")
        }
        try await RunningServer.with(database: database, binaryHeadVersion: 1) { server in
            #expect(try await TestHTTP.awaitReady(server.baseURL) == 200)
            server.readiness.beginShutdown()
            let shutting = try await server.get("/readyz")
            #expect(shutting.status == 503)
            #expect(shutting.header("Retry-After") != nil)
            #expect(try await server.get("/livez").status == 200)
        }
    }

    @Test func readyzAnswers503WithRetryAfterWhenTheDatabaseIsGone() async throws {
        let database = try await TestPostgres.shared.migratedDatabase()
        try await RunningServer.with(database: database) { server in
            #expect(try await TestHTTP.awaitReady(server.baseURL) == 200)
            // Take the database away: drop it from under the server.
            try await TestPostgres.shared.withAdminConnection { admin in
                try await admin.simpleQuery(unsafeSQL: "DROP DATABASE \(PGQuery.quoteIdentifier(database.name)) WITH (FORCE)")
            }
            let reply = try await server.get("/readyz")
            #expect(reply.status == 503)
            #expect(reply.header("Retry-After") != nil)
            #expect(try await server.get("/livez").status == 200)
        }
    }

    @Test func aDatabaseAheadOfTheBinaryLetsServeStartWithAWarning() async throws {
        let database = try await TestPostgres.shared.migratedDatabase()
        // A newer binary added a migration the running one does not ship.
        try await database.withPool(size: 1) { pool in
            try await pool.withConnection { connection in
                try await connection.query("INSERT INTO habitsync_schema_migrations (version, name, checksum) VALUES (9000, 'from_the_future', \(String(repeating: "a", count: 64)))")
            }
        }
        let directory = try MigrationDirectory(url: TestPostgres.migrationsDirectory)
        for mode in [ServeCommand.MigrateMode.auto, .check] {
            try await ServeCommand.prepareSchema(mode: mode, connectionString: database.connectionString, directory: directory, options: .init(), logger: TestPostgres.logger)
        }
        try await RunningServer.with(database: database, binaryHeadVersion: directory.headVersion) { server in
            let ready = try await Self.readinessOnceTheDatabaseAnswered(server)
            #expect(ready.status == 200)
            #expect(try ready.json()["schemaVersion"] as? Int == 9000)
        }
    }

    @Test func migrateCheckRefusesToStartWhileMigrationsArePending() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        let directory = try MigrationDirectory(url: TestPostgres.migrationsDirectory)
        await #expect {
            try await ServeCommand.prepareSchema(mode: .check, connectionString: database.connectionString, directory: directory, options: .init(), logger: TestPostgres.logger)
        } throws: { ($0 as? MigrationError)?.code == .pending }
        try await ServeCommand.prepareSchema(mode: .off, connectionString: database.connectionString, directory: directory, options: .init(), logger: TestPostgres.logger)
        try await ServeCommand.prepareSchema(mode: .auto, connectionString: database.connectionString, directory: directory, options: .init(), logger: TestPostgres.logger)
        try await ServeCommand.prepareSchema(mode: .check, connectionString: database.connectionString, directory: directory, options: .init(), logger: TestPostgres.logger)
    }
}
