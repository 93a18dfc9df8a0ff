import Foundation
import LibPQClient
import Migrations
import ServerHarness
import TestSupport
import Testing

/// Migrations hold a session-level lock, which a transaction pooler cannot keep for them:
/// through PgBouncer they refuse, saying what to do, and change nothing.
@Suite struct MigrationsBehindPoolerTests {
    @Test func migrationsThroughPgBouncerRefuseWithAClearMessage() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        let bouncer = try await TestPostgres.shared.pgBouncer(poolSize: 2)
        defer { bouncer.stop() }
        let configuration = PGPool.Configuration(connection: .init(connectionString: bouncer.connectionString(database: database.name)), maximumConnections: 1)
        try await PGPool.withPool(configuration, logger: TestPostgres.logger) { pool in
            let runner = MigrationRunner(pool: pool, directory: try MigrationDirectory(url: TestPostgres.migrationsDirectory), logger: TestPostgres.logger)
            do {
                _ = try await runner.up()
                Issue.record("migrations ran through PgBouncer")
            } catch let error as MigrationError {
                #expect(error.code == .behindPooler)
                #expect(error.message.contains("direct connection") && error.message.contains("--database-url"))
            }
        }
        // Nothing was applied; directly, the same migrations run.
        try await database.withPool(size: 1) { pool in
            let runner = MigrationRunner(pool: pool, directory: try MigrationDirectory(url: TestPostgres.migrationsDirectory), logger: TestPostgres.logger)
            #expect(try await runner.status().entries.allSatisfy { $0.applied == nil })
            #expect(try await runner.up().applied.count > 0)
        }
    }
}
