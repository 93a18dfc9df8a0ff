import Foundation
import HabitSyncDomain
import LibPQClient
import TestSupport
import Testing

@testable import HabitSyncStore

/// A push reads the stored records it merges as typed columns through the field declarations
/// (`StoredFieldsSQL`), where pulls render them with the record functions: for every
/// collection with declared fields and the awkward rows of `WireRecordParityTests` (NULLs,
/// escapes, every schedule shape, times, dates at the edges), the two must be the same wire
/// values, or a merge would see a change where there is none, or none where there is one.
@Suite struct StoredFieldsParityTests {
    @Test func typedColumnsReadTheRecordTheRecordFunctionsRender() async throws {
        let database = try await TestPostgres.shared.migratedDatabase()
        let pool = database.pool(size: 2)
        defer { pool.close() }
        try await WireRecordParityTests.seedVariants(pool, tenantName: "stored-fields")
        let collections = SyncCollection.allCases.filter { RecordFields.of($0) != nil }
        #expect(collections.count == 9)
        for collection in collections {
            let table = SyncTable(collection)
            let rows = try await pool.withConnection {
                try await $0.query(
                    """
                    SELECT \(WireChangeSQL.record(collection, alias: "h"))::text AS rendered, \(StoredFieldsSQL.columns(table, alias: "h"))
                    FROM \(table.table) h WHERE h.deleted_at IS NULL
                    """
                ).rows
            }
            #expect(rows.count >= WireRecordParityTests.variants[collection.table]?.count ?? 1, "\(collection.table): \(rows.count) rows")
            for row in rows {
                let rendered = try JSONParser.parse(bytes: Array(try row.decode("rendered", as: String.self).utf8))
                let read = JSONValue.object(try StoredFieldsSQL.wireFields(table, row))
                #expect(read == rendered, "\(collection.table): \(read.jsonText) ≠ \(rendered.jsonText)")
            }
        }
    }
}
