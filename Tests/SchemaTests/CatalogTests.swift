import Foundation
import LibPQClient
import TestSupport
import Testing

/// What analysts and a future Citus distribution rely on, checked from the catalog.
@Suite struct CatalogTests {
    @Test func everyTableColumnAndFunctionHasAComment() async throws {
        let database = try await TestPostgres.shared.migratedDatabase()
        try await database.withPool(size: 1) { pool in
            let missing = try await pool.withConnection { connection in
                try await connection.query(
                    """
                    SELECT c.relname || coalesce('.' || a.attname, '') AS object
                    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                    LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
                    WHERE n.nspname IN ('public', 'analytics', 'archive') AND c.relkind IN ('r', 'p', 'v', 'm')
                      AND ((a.attname IS NULL AND obj_description(c.oid, 'pg_class') IS NULL)
                        OR (a.attname IS NOT NULL AND col_description(c.oid, a.attnum) IS NULL))
                    UNION ALL
                    SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                    WHERE n.nspname IN ('public', 'analytics', 'archive') AND c.relkind IN ('r', 'p', 'v', 'm') AND obj_description(c.oid, 'pg_class') IS NULL
                    UNION ALL
                    SELECT p.proname || '()' FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                    WHERE n.nspname IN ('public', 'analytics') AND obj_description(p.oid, 'pg_proc') IS NULL
                    ORDER BY 1
                    """
                ).rows.map { try $0.decode("object", as: String.self) }
            }
            #expect(missing == [])
        }
    }

    @Test func everyKeyOfPerUserDataStartsWithTenantAndUser() async throws {
        let database = try await TestPostgres.shared.migratedDatabase()
        try await database.withPool(size: 1) { pool in
            let offenders = try await pool.withConnection { connection in
                try await connection.query(
                    """
                    SELECT i.indexrelid::regclass::text AS index
                    FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
                    WHERE n.nspname = 'public' AND (i.indisunique OR i.indisprimary)
                      AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'user_id')
                      AND NOT ((SELECT attname FROM pg_attribute WHERE attrelid = c.oid AND attnum = i.indkey[0]) = 'tenant_id'
                           AND (SELECT attname FROM pg_attribute WHERE attrelid = c.oid AND attnum = i.indkey[1]) = 'user_id')
                    """
                ).rows.map { try $0.decode("index", as: String.self) }
            }
            #expect(offenders == [])
            // And no foreign key between per-user tables skips the user.
            let crossing = try await pool.withConnection { connection in
                try await connection.query(
                    """
                    SELECT conname FROM pg_constraint c
                    WHERE contype = 'f' AND connamespace = 'public'::regnamespace
                      AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.confrelid AND a.attname = 'user_id')
                      AND NOT (SELECT array_agg(attname ORDER BY attnum) FROM pg_attribute WHERE attrelid = c.conrelid AND attnum = ANY(c.conkey))
                              @> ARRAY['tenant_id', 'user_id']::name[]
                    """
                ).rows.map { try $0.decode("conname", as: String.self) }
            }
            #expect(crossing == [])
        }
    }

    @Test func usageEventsArePartitionedByMonth() async throws {
        let database = try await TestPostgres.shared.migratedDatabase()
        try await database.withPool(size: 1) { pool in
            let seeded = try await SchemaFixture.seedTenant(pool, name: "partitions", users: ["u"])
            let placement = try await pool.withTransaction { connection in
                try await SchemaFixture.setContext(connection, tenant: seeded.tenant, user: "u")
                for instant in ["'2026-11-30 23:59:59.999+00'", "'2026-12-01 00:00:00+00'", "'1999-06-01 00:00:00+00'"] {
                    try await connection.query(SchemaFixture.insert("usage_events", tenant: seeded.tenant, user: "u", habit: nil, overrides: ["occurred_at": instant]))
                }
                return try await connection.query("SELECT tableoid::regclass::text AS part FROM usage_events ORDER BY occurred_at").rows.map { try $0.decode("part", as: String.self) }
            }
            #expect(placement == ["usage_events_default", "usage_events_2026_11", "usage_events_2026_12"])
            let strategy = try await pool.withConnection {
                try await $0.query("SELECT partstrat FROM pg_partitioned_table WHERE partrelid = 'usage_events'::regclass").single().decode("partstrat", as: String.self)
            }
            #expect(strategy == "r")
        }
    }

    @Test func pullIndexesExistForEverySyncedTable() async throws {
        let database = try await TestPostgres.shared.migratedDatabase()
        try await database.withPool(size: 1) { pool in
            let missing = try await pool.withConnection { connection in
                try await connection.query(
                    """
                    SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                    WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
                      AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'server_version')
                      AND NOT EXISTS (
                          SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid
                            AND pg_get_indexdef(i.indexrelid) LIKE '%(tenant_id, user_id, server_version)%')
                    """
                ).rows.map { try $0.decode("relname", as: String.self) }
            }
            #expect(missing == [])
        }
    }
}
