import CLibPQ
import Foundation

/// libpq's results copied into Sendable values, and its failures into `PGError`s.
extension PGConnection {
    static func copy(_ result: OpaquePointer, _ connection: OpaquePointer) throws -> PGResult {
        switch PQresultStatus(result) {
        case PGRES_TUPLES_OK, PGRES_SINGLE_TUPLE, PGRES_COMMAND_OK, PGRES_EMPTY_QUERY:
            break
        case PGRES_FATAL_ERROR, PGRES_NONFATAL_ERROR, PGRES_BAD_RESPONSE:
            throw serverError(result, connection)
        default:
            throw PGError.client("unexpected result status \(String(cString: PQresStatus(PQresultStatus(result))))")
        }
        let columnCount = Int(PQnfields(result))
        let rowCount = Int(PQntuples(result))
        var columns: [PGColumn] = []
        columns.reserveCapacity(columnCount)
        for column in 0..<columnCount {
            columns.append(PGColumn(name: String(cString: PQfname(result, Int32(column))), type: PGTypeOID(PQftype(result, Int32(column)))))
        }
        var cells: [[String?]] = []
        cells.reserveCapacity(rowCount)
        for row in 0..<rowCount {
            var values: [String?] = []
            values.reserveCapacity(columnCount)
            for column in 0..<columnCount {
                if PQgetisnull(result, Int32(row), Int32(column)) == 1 {
                    values.append(nil)
                } else {
                    let length = Int(PQgetlength(result, Int32(row), Int32(column)))
                    // Non-NULL for every row and column inside the result's bounds, as here.
                    let value = PQgetvalue(result, Int32(row), Int32(column))!
                    values.append(
                        value.withMemoryRebound(to: UInt8.self, capacity: length) {
                            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
                        })
                }
            }
            cells.append(values)
        }
        let tag = String(cString: PQcmdStatus(result))
        let tuples = String(cString: PQcmdTuples(result))
        return PGResult(columns: columns, cells: cells, affectedRows: Int(tuples), commandTag: tag)
    }

    static func serverError(_ result: OpaquePointer, _ connection: OpaquePointer) -> PGError {
        let field = { (code: Int32) in resultField(result, code) }
        guard let state = field(CLIBPQ_DIAG_SQLSTATE) else {
            // No SQLSTATE: libpq itself failed (lost connection, protocol error).
            let message = String(cString: PQresultErrorMessage(result)).trimmingTrailingNewlines()
            return PGError(kind: .connection, message: message.isEmpty ? connectionError(connection).message : message)
        }
        return PGError(
            kind: .server,
            sqlState: PGSQLState(state),
            message: field(CLIBPQ_DIAG_MESSAGE_PRIMARY) ?? "unknown server error",
            detail: field(CLIBPQ_DIAG_MESSAGE_DETAIL),
            hint: field(CLIBPQ_DIAG_MESSAGE_HINT),
            position: field(CLIBPQ_DIAG_STATEMENT_POSITION).flatMap { Int($0) },
            table: field(CLIBPQ_DIAG_TABLE_NAME),
            column: field(CLIBPQ_DIAG_COLUMN_NAME),
            constraint: field(CLIBPQ_DIAG_CONSTRAINT_NAME)
        )
    }

    static func connectionError(_ pointer: OpaquePointer) -> PGError {
        let message = String(cString: PQerrorMessage(pointer)).trimmingTrailingNewlines()
        return PGError(kind: .connection, message: message.isEmpty ? "the connection to the server was lost" : message)
    }
}
