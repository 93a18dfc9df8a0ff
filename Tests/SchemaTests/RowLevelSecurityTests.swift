import Foundation
import LibPQClient
import TestSupport
import Testing

/// Inside tenant A's context, unscoped statements on every per-tenant table touch no row of
/// tenant B, both for the request role and for the tables' owner (RLS is forced).
@Suite struct RowLevelSecurityTests {
    struct World {
        let database: TestDatabase
        let tenantA: UUID
        let tenantB: UUID
    }

    /// Two tenants with two users each, and a row in every per-tenant table for every user.
    static func world() async throws -> World {
        let database = try await TestPostgres.shared.migratedDatabase()
        let (tenantA, tenantB) = try await database.withPool(size: 1) { pool in
            let a = try await SchemaFixture.seedTenant(pool, name: "tenant-a", users: ["alice", "amir"])
            let b = try await SchemaFixture.seedTenant(pool, name: "tenant-b", users: ["alice", "bo"])  // "alice" exists in both
            for (tenant, habits) in [(a.tenant, a.habits), (b.tenant, b.habits)] {
                for (user, habit) in habits {
                    try await pool.withTransaction { connection in
                        try await SchemaFixture.setContext(connection, tenant: tenant, user: user)
                        for table in SchemaFixture.insertOrder where !["users", "habits", "tenant_keys"].contains(table) {
                            try await connection.query(SchemaFixture.insert(table, tenant: tenant, user: user, habit: habit))
                        }
                    }
                }
                try await pool.withTransaction { connection in
                    try await SchemaFixture.setContext(connection, tenant: tenant, user: nil)
                    try await connection.query(SchemaFixture.insert("tenant_keys", tenant: tenant, user: "", habit: nil))
                }
            }
            return (a.tenant, b.tenant)
        }
        return World(database: database, tenantA: tenantA, tenantB: tenantB)
    }

    /// Every table (and partition) of the public schema that has a tenant_id column.
    static func perTenantTables(_ pool: PGPool) async throws -> [String] {
        try await pool.withConnection { connection in
            try await connection.query(
                """
                SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped
                WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') ORDER BY c.relname
                """
            ).rows.map { try $0.decode("relname", as: String.self) }
        }
    }

    static func count(_ connection: PGConnection, _ table: String, where condition: String = "true") async throws -> Int {
        try await connection.query(PGQuery(unsafeSQL: "SELECT count(*) AS n FROM \(PGQuery.quoteIdentifier(table)) WHERE \(condition)")).single().decode("n", as: Int.self)
    }

    @Test func rowLevelSecurityIsEnabledAndForcedOnEveryPerTenantTable() async throws {
        let database = try await TestPostgres.shared.migratedDatabase()
        try await database.withPool(size: 1) { pool in
            let tables = try await Self.perTenantTables(pool)
            #expect(tables.count >= 19 + 61)  // the tables plus usage_events' partitions
            let unprotected = try await pool.withConnection { connection in
                try await connection.query(
                    """
                    SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                    WHERE n.nspname = 'public' AND c.relname = ANY(\(tables))
                      AND NOT (c.relrowsecurity AND c.relforcerowsecurity
                               AND EXISTS (SELECT 1 FROM pg_policy p WHERE p.polrelid = c.oid))
                    """
                ).rows.map { try $0.decode("relname", as: String.self) }
            }
            #expect(unprotected == [])
        }
    }

    @Test func theRequestRoleOwnsNothingAndCannotBypassRowLevelSecurity() async throws {
        let database = try await TestPostgres.shared.migratedDatabase()
        try await database.withPool(size: 1) { pool in
            let role = try await pool.withConnection { connection in
                try await connection.query(
                    """
                    SELECT rolsuper, rolbypassrls, rolcanlogin,
                           (SELECT count(*) FROM pg_class c WHERE c.relowner = r.oid) AS owned
                    FROM pg_roles r WHERE rolname = 'habitsync_app'
                    """
                ).single()
            }
            #expect(try role.decode("rolsuper", as: Bool.self) == false)
            #expect(try role.decode("rolbypassrls", as: Bool.self) == false)
            #expect(try role.decode("owned", as: Int.self) == 0)
        }
    }

    /// Superusers bypass row-level security even when it is forced, which is why requests
    /// run as `habitsync_app` whatever role DATABASE_URL logs in as.
    @Test func unscopedStatementsInTenantAsContextNeverTouchTenantB() async throws {
        let world = try await Self.world()
        let tables = try await world.database.withPool(size: 1) { try await Self.perTenantTables($0) }
        let bRowsBefore = try await world.database.withPool(size: 1) { try await Self.rowsPerTable($0, tables, tenant: world.tenantB) }
        #expect(bRowsBefore.values.allSatisfy { $0 > 0 } == false)  // partitions without rows exist
        #expect(bRowsBefore.filter { $0.value > 0 }.count >= 18, "tenant B has rows in every data table")

        try await world.database.withPool(size: 1, role: "habitsync_app") { pool in
            try await pool.withConnection { connection in
                // Partitions are reachable only through their parent (and are forced too).
                let grantedPartitions = try await connection.query(
                    """
                    SELECT count(*) AS n FROM pg_class WHERE relispartition AND relname LIKE 'usage_events%'
                      AND has_table_privilege(oid, 'SELECT')
                    """
                ).single().decode("n", as: Int.self)
                #expect(grantedPartitions == 0)

                try await connection.simpleQuery(unsafeSQL: "BEGIN")
                try await SchemaFixture.setContext(connection, tenant: world.tenantA, user: nil)
                let tenantB = "'\(world.tenantB.uuidString.lowercased())'"
                var visible: [String: Int] = [:]
                for table in ["tenants"] + SchemaFixture.insertOrder {
                    let column = table == "tenants" ? "id" : "tenant_id"
                    let visibleB = try await Self.count(connection, table, where: "\(column) = \(tenantB)")
                    #expect(visibleB == 0, "\(table): tenant B rows visible to A")
                    visible[table] = try await Self.count(connection, table)
                    #expect(visible[table]! > 0, "\(table): A sees its own rows")
                    // The column's privilege: `tenants` grants UPDATE on id alone (migration 0045).
                    let canUpdate = try await connection.query("SELECT has_column_privilege(\(table), \(column), 'UPDATE') AS can").single().decode("can", as: Bool.self)
                    if canUpdate {
                        let updated = try await connection.query(PGQuery(unsafeSQL: "UPDATE \(table) SET \(column) = \(column)")).affectedRows
                        #expect(updated == visible[table], "\(table): UPDATE touched \(updated ?? -1) rows, A has \(visible[table]!)")
                    }
                }
                // Children before parents, so foreign keys do not stop the deletes.
                for table in SchemaFixture.insertOrder.reversed() {
                    let canDelete = try await connection.query("SELECT has_table_privilege(\(table), 'DELETE') AS can").single().decode("can", as: Bool.self)
                    guard canDelete else { continue }
                    let deleted = try await connection.query(PGQuery(unsafeSQL: "DELETE FROM \(table)")).affectedRows
                    #expect(deleted == visible[table], "\(table): DELETE touched \(deleted ?? -1) rows, A has \(visible[table]!)")
                }
                try await connection.simpleQuery(unsafeSQL: "ROLLBACK")
            }
        }
        let bRowsAfter = try await world.database.withPool(size: 1) { try await Self.rowsPerTable($0, tables, tenant: world.tenantB) }
        #expect(bRowsAfter == bRowsBefore)
    }

    @Test func usersOfOneTenantCannotSeeEachOther() async throws {
        let world = try await Self.world()
        try await world.database.withPool(size: 1, role: "habitsync_app") { pool in
            try await pool.withTransaction { connection in
                try await SchemaFixture.setContext(connection, tenant: world.tenantA, user: "alice")
                for table in ["habits", "daily_progress", "usage_events", "user_settings", "conflict_log"] {
                    let others = try await Self.count(connection, table, where: "user_id <> 'alice'")
                    #expect(others == 0, "\(table) shows another user's rows")
                    let own = try await Self.count(connection, table)
                    #expect(own == 1, "\(table)")
                }
            }
        }
    }

    @Test func withoutAContextEveryTableLooksEmptyAndWritesAcrossTenantsAreRefused() async throws {
        let world = try await Self.world()
        try await world.database.withPool(size: 1, role: "habitsync_app") { pool in
            try await pool.withTransaction { connection in
                for table in ["users", "habits", "usage_events", "tenant_keys", "tenants"] {
                    let visible = try await Self.count(connection, table)
                    #expect(visible == 0, "\(table) visible without a tenant")
                }
            }
            await #expect {
                try await pool.withTransaction { connection in
                    try await SchemaFixture.setContext(connection, tenant: world.tenantA, user: "alice")
                    try await connection.query(SchemaFixture.insert("devices", tenant: world.tenantB, user: "alice", habit: nil, overrides: ["device_id": "'intruder'"]))
                }
            } throws: { ($0 as? PGError)?.sqlState == .insufficientPrivilege }
            // The request role cannot read another tenant's keys or write tenants at all.
            await #expect {
                try await pool.withTransaction { try await $0.query("INSERT INTO tenants (name) VALUES ('sneaky')") }
            } throws: { ($0 as? PGError)?.sqlState == .insufficientPrivilege }
        }
    }

    /// Rows of one tenant per table, counted with an explicit filter (the test cluster's owner
    /// is a superuser, which row-level security does not restrict).
    static func rowsPerTable(_ pool: PGPool, _ tables: [String], tenant: UUID) async throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for table in tables {
            counts[table] = try await pool.withTransaction { connection in
                try await SchemaFixture.setContext(connection, tenant: tenant, user: nil)
                return try await Self.count(connection, table, where: "tenant_id = '\(tenant.uuidString.lowercased())'")
            }
        }
        return counts
    }
}
