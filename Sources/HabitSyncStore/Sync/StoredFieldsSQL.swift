import Foundation
import HabitSyncDomain
import LibPQClient

/// A stored row's record read as typed columns and turned into wire values through the field
/// declarations (`RecordField.fromColumns`): what the record-rendering SQL function would
/// render, without PostgreSQL building JSON text for the server to parse again.
enum StoredFieldsSQL {
    /// The data columns of `table` for a `SELECT` over the row aliased `alias`, named `c0`,
    /// `c1`, … in `table.columns` order (a data column may share a name with a key column the
    /// statement also selects, such as `achievement_id`). A `time` as its text; a time stamp cut
    /// to the millisecond as the wire renders it (`habitsync_json_time`), in PostgreSQL's exact
    /// microseconds: a column such as a habit's `created_at` defaults to `now()`, and a `Date`
    /// far from 1970 no longer holds microseconds to cut.
    static func columns(_ table: SyncTable, alias: PGFragment) -> PGFragment {
        table.columns.enumerated().map { index, column -> PGFragment in
            let stored: PGFragment = "\(alias).\(column.name)"
            let value: PGFragment =
                switch column.declared.type {
                case .time: "\(stored)::text"
                case .timestamptz: "date_trunc('milliseconds', \(stored))"
                case .timestamptzArray:
                    """
                    CASE WHEN \(stored) IS NOT NULL THEN \
                    ARRAY(SELECT date_trunc('milliseconds', t) FROM unnest(\(stored)) WITH ORDINALITY AS u(t, o) ORDER BY o) END
                    """
                default: stored
                }
            return "\(value) AS \(name(index))"
        }.joined(separator: ", ")
    }

    /// The record's fields as wire values, from the columns `columns` selected.
    static func wireFields(_ table: SyncTable, _ row: PGRow) throws -> [String: JSONValue] {
        var fields: [String: JSONValue] = [:]
        var index = 0
        for field in table.fields {
            var values: [FieldValue] = []
            for column in field.columns {
                values.append(try value(of: column, row, name(index)))
                index += 1
            }
            fields[field.name] = field.fromColumns(values)
        }
        return fields
    }

    private static func name(_ index: Int) -> PGFragment { "c\(index)" }

    /// One column's value, decoded as its declared type.
    private static func value(of column: StoredColumn, _ row: PGRow, _ name: PGFragment) throws -> FieldValue {
        let name = name.sql
        switch column.type {
        case .text: return .text(try row.decodeIfPresent(name, as: String.self))
        case .int2, .int4: return .integer(try row.decodeIfPresent(name, as: Int.self))
        case .float8: return .number(try row.decodeIfPresent(name, as: Double.self))
        case .bool: return .bool(try row.decodeIfPresent(name, as: Bool.self))
        case .uuid: return .uuid(try row.decodeIfPresent(name, as: UUID.self))
        case .date: return .date(try row.decodeIfPresent(name, as: LocalDate.self))
        // `HH:MM:SS` as PostgreSQL prints it; the wire and the record function say `HH:MM`.
        case .time: return .text(try row.decodeIfPresent(name, as: String.self).map { String($0.prefix(5)) })
        case .timestamptz: return .timestamp(try row.decodeIfPresent(name, as: Date.self))
        case .textArray: return .texts(try row.decodeIfPresent(name, as: [String].self))
        case .timestamptzArray: return .timestamps(try row.decodeIfPresent(name, as: [Date].self))
        }
    }
}
