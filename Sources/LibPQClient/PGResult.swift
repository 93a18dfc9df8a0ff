/// A result column: its name and type.
public struct PGColumn: Sendable, Hashable {
    public let name: String
    public let type: PGTypeOID
}

/// The rows of one statement, copied out of libpq's result (which is freed at once), so they
/// are plain Sendable Swift values.
public struct PGResult: Sendable {
    public let columns: [PGColumn]
    public let rows: [PGRow]
    /// Rows inserted, updated or deleted (libpq's `PQcmdTuples`); nil for other commands.
    public let affectedRows: Int?
    public let commandTag: String

    init(columns: [PGColumn], cells: [[String?]], affectedRows: Int?, commandTag: String) {
        let layout = PGRow.Layout(columns: columns)
        self.columns = columns
        self.rows = cells.map { PGRow(layout: layout, cells: $0) }
        self.affectedRows = affectedRows
        self.commandTag = commandTag
    }

    /// The only row; throws when there is not exactly one.
    public func single() throws -> PGRow {
        guard rows.count == 1 else {
            throw PGError(kind: .decoding, message: "expected exactly one row, got \(rows.count)")
        }
        return rows[0]
    }
}

/// One row. Decoding errors name the column, its PostgreSQL type and the Swift type asked for.
public struct PGRow: Sendable {
    final class Layout: Sendable {
        let columns: [PGColumn]
        let indexByName: [String: Int]
        init(columns: [PGColumn]) {
            self.columns = columns
            var index: [String: Int] = [:]
            for (offset, column) in columns.enumerated() where index[column.name] == nil {
                index[column.name] = offset
            }
            self.indexByName = index
        }
    }

    let layout: Layout
    /// Text values as the server printed them; nil is SQL NULL.
    public let cells: [String?]

    public var columns: [PGColumn] { layout.columns }

    /// Decodes a non-NULL column.
    public func decode<T: PGDecodable>(_ column: String, as type: T.Type = T.self) throws -> T {
        guard let value = try decodeIfPresent(column, as: T.self) else {
            throw PGError(kind: .decoding, message: "column \"\(column)\" is NULL; expected \(T.self)")
        }
        return value
    }

    /// Decodes a column that may be NULL.
    public func decodeIfPresent<T: PGDecodable>(_ column: String, as type: T.Type = T.self) throws -> T? {
        guard let index = layout.indexByName[column] else {
            throw PGError(kind: .decoding, message: "no column \"\(column)\" in the result (columns: \(layout.columns.map(\.name).joined(separator: ", ")))")
        }
        return try decodeIfPresent(at: index, as: T.self)
    }

    public func decode<T: PGDecodable>(at index: Int, as type: T.Type = T.self) throws -> T {
        guard let value = try decodeIfPresent(at: index, as: T.self) else {
            throw PGError(kind: .decoding, message: "column \"\(layout.columns[index].name)\" is NULL; expected \(T.self)")
        }
        return value
    }

    public func decodeIfPresent<T: PGDecodable>(at index: Int, as type: T.Type = T.self) throws -> T? {
        guard index >= 0 && index < cells.count else {
            throw PGError(kind: .decoding, message: "column index \(index) out of range (\(cells.count) columns)")
        }
        let column = layout.columns[index]
        guard T.accepts(column.type) else {
            throw PGError(kind: .decoding, message: "column \"\(column.name)\" has type \(column.type), which cannot be decoded as \(T.self)")
        }
        guard let text = cells[index] else { return nil }
        guard let value = T(pgText: text, type: column.type) else {
            throw PGError(kind: .decoding, message: "column \"\(column.name)\" of type \(column.type) holds a value that is not a valid \(T.self)")
        }
        return value
    }

    /// The raw text of a column of any type; nil for NULL.
    public func text(_ column: String) throws -> String? {
        guard let index = layout.indexByName[column] else {
            throw PGError(kind: .decoding, message: "no column \"\(column)\" in the result")
        }
        return cells[index]
    }
}
