import Foundation
import HabitSyncDomain
import LibPQClient
import SyncTestSupport
import TestSupport
import Testing

@testable import HabitSyncStore

/// Each collection's fields are declared once (`RecordFields`: wire name, columns and their
/// types, merge rule, stored and canonical values); the store's statements and the field merge
/// read the declarations. What the declarations cannot generate is held to them here: the
/// migrated tables, the record-rendering functions pulls use, and `openapi.yaml`.
@Suite struct RecordFieldDeclarationTests {
    static let pushed = SyncCollection.allCases.filter { RecordFields.of($0) != nil }

    /// Columns of a sync table that are the row's bookkeeping, not a record field.
    static let bookkeeping: Set<String> = ["tenant_id", "user_id", "id", "updated_at", "updated_by", "server_version", "synced_at", "deleted_at", "field_times"]
    /// A day's counter: the latest set and its key (`ProgressCounter`).
    static let counterColumns: [SyncCollection: Set<String>] = [.dailyProgress: ["count_set_value", "count_set_at", "count_set_by"]]

    /// `format_type` of each declared type, without modifiers.
    static func postgresName(_ type: StoredColumn.SQLType) -> String {
        switch type {
        case .text: "text"
        case .int2: "smallint"
        case .int4: "integer"
        case .float8: "double precision"
        case .bool: "boolean"
        case .uuid: "uuid"
        case .date: "date"
        case .time: "time without time zone"
        case .timestamptz: "timestamp with time zone"
        case .textArray: "text[]"
        case .timestamptzArray: "timestamp with time zone[]"
        }
    }

    static func schemaName(_ collection: SyncCollection) -> String {
        switch collection {
        case .xpTransactions: "XPTransactionRecord"
        case .dailyProgress: "DailyProgressRecord"
        case .userSettings: "UserSettingsRecord"
        default:
            // habits → HabitRecord, focusSessions → FocusSessionRecord, …
            String(collection.rawValue.prefix(1).uppercased() + collection.rawValue.dropFirst().dropLast()) + "Record"
        }
    }

    @Test func everyDeclaredColumnIsInItsTableWithItsTypeAndEveryDataColumnIsDeclared() async throws {
        let world = try await SyncWorld.make()
        try await world.database.withPool(size: 1) { pool in
            try await pool.withConnection { connection in
                for collection in Self.pushed {
                    let rows = try await connection.query(
                        """
                        SELECT a.attname::text AS name, format_type(a.atttypid, NULL) AS type FROM pg_attribute a
                        WHERE a.attrelid = to_regclass(\(collection.table)) AND a.attnum > 0 AND NOT a.attisdropped
                        """
                    ).rows
                    var stored: [String: String] = [:]
                    for row in rows { stored[try row.decode("name")] = try row.decode("type", as: String.self) }
                    let declared = (RecordFields.of(collection) ?? []).flatMap(\.columns)
                    for column in declared {
                        #expect(
                            stored[column.name] == Self.postgresName(column.type),
                            "\(collection.table).\(column.name): declared \(column.type.rawValue), the table has \(stored[column.name] ?? "no such column")")
                    }
                    let undeclared = Set(stored.keys).subtracting(declared.map(\.name)).subtracting(Self.bookkeeping).subtracting(Self.counterColumns[collection] ?? [])
                    #expect(undeclared.isEmpty, "\(collection.table) has columns no field declares: \(undeclared.sorted())")
                }
            }
        }
    }

    /// The record functions render a row with every declared field and no other, in the order
    /// declared (a row of NULLs: the functions write every key, null or not).
    @Test func theRecordFunctionsRenderExactlyTheDeclaredFields() async throws {
        let world = try await SyncWorld.make()
        try await world.database.withPool(size: 1) { pool in
            try await pool.withConnection { connection in
                for collection in Self.pushed {
                    let table = PGFragment.identifier(collection.table)
                    let text = try await connection.query(
                        "SELECT \(WireChangeSQL.record(collection, alias: "h"))::text AS record FROM (SELECT (NULL::\(table)).*) h"
                    ).rows.first?.decodeIfPresent("record", as: String.self)
                    guard let text, case .object(let record) = try JSONParser.parse(bytes: Array(text.utf8)) else {
                        Issue.record("\(collection): no record rendered")
                        continue
                    }
                    let declared = (RecordFields.of(collection) ?? []).map(\.name)
                    #expect(Set(record.keys) == Set(declared), "\(collection): rendered \(record.keys.sorted()), declared \(declared.sorted())")
                }
            }
        }
    }

    @Test func theContractDocumentsExactlyTheDeclaredFields() throws {
        let spec = try OpenAPIValidator(yaml: String(contentsOf: OpenAPIValidator.documentURL, encoding: .utf8))
        for collection in Self.pushed {
            let properties = spec.schema(named: Self.schemaName(collection))["properties"] as? [String: Any] ?? [:]
            let declared = Set((RecordFields.of(collection) ?? []).map(\.name))
            #expect(Set(properties.keys) == declared, "\(Self.schemaName(collection)): documents \(properties.keys.sorted()), declared \(declared.sorted())")
        }
    }

    /// What the field merge compares is what PostgreSQL stores and renders: a record pushed
    /// whole and read back renders to its declared canonical fields.
    @Test func aStoredRecordRendersAsItsCanonicalFields() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let device = try await world.client(server, user: "ada")
            let habit = UUID()
            var record = Wire.habit()
            record["schedule"] = ["type": "specificWeekdays", "weekdays": ["monday", "friday"]]
            record["createdAt"] = "2026-11-20T08:15:30.120+00:00"
            record["color"] = "#ff8800"
            #expect(try await device.push([Wire.change("habits", habit, at: Wire.at(0), record: record)]).status(0) == "applied")
            let context = ValidationContext.standalone(now: Date())
            let sent = try JSONParser.parse(bytes: Array(try JSONSerialization.data(withJSONObject: record)))
            guard case .object(let fields) = sent else { return }
            let canonical = CanonicalFields.of(try ValidatedRecord.validate(.habits, fields, context: context)) ?? [:]
            let stored = try await world.database.withPool(size: 1) { pool in
                try await pool.withConnection { connection in
                    try await connection.query("SELECT \(WireChangeSQL.record(.habits, alias: "h"))::text AS record FROM habits h WHERE h.id = \(habit)").rows.first?
                        .decode("record", as: String.self)
                }
            }
            #expect(try stored.map { try JSONParser.parse(bytes: Array($0.utf8)) } == .object(canonical))
        }
    }
}
