/// An error from the PostgreSQL client. Its `description` may reach a log: it carries the
/// SQLSTATE, the server's message and hint, but never the query's parameters, connection
/// secrets, or the `detail` field (which can quote row values, such as a duplicate key's).
/// For a data error (`isDataError`) it leaves out the message too, which can quote the value
/// refused (22P02: `invalid input syntax for type uuid: "…"`), and names the constraint,
/// table and column instead.
public struct PGError: Error, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// Could not connect, or the connection broke during a call.
        case connection
        /// The server answered with an error (see `sqlState`).
        case server
        /// A result could not be decoded into the requested Swift type.
        case decoding
        /// The pool is closed, or the client was used in a way libpq does not allow.
        case client
    }

    public var kind: Kind
    public var sqlState: PGSQLState?
    public var message: String
    public var detail: String?
    public var hint: String?
    /// 1-based character position in the statement, when the server reported one.
    public var position: Int?
    public var table: String?
    public var column: String?
    public var constraint: String?

    public init(
        kind: Kind, sqlState: PGSQLState? = nil, message: String, detail: String? = nil,
        hint: String? = nil, position: Int? = nil, table: String? = nil, column: String? = nil,
        constraint: String? = nil
    ) {
        self.kind = kind
        self.sqlState = sqlState
        self.message = message
        self.detail = detail
        self.hint = hint
        self.position = position
        self.table = table
        self.column = column
        self.constraint = constraint
    }

    /// True when the connection that produced this error can no longer be used.
    public var isConnectionFailure: Bool {
        if kind == .connection { return true }
        guard let state = sqlState else { return false }
        // 08xxx connection exceptions; 57P01..57P03 the server shutting down or starting.
        return state.errorClass == "08" || state == .adminShutdown || state == .cannotConnectNow
            || state.code == "57P02"
    }

    /// True when PostgreSQL refused the data itself (SQLSTATE class 22 data exception, 23
    /// integrity constraint violation, 54 program limit exceeded such as an index row too
    /// large): retrying the same statement with the same values fails again.
    public var isDataError: Bool {
        guard let state = sqlState else { return false }
        return ["22", "23", "54"].contains(state.errorClass)
    }

    public var description: String {
        var text = "PostgreSQL \(kind.rawValue) error"
        if let sqlState { text += " \(sqlState)" }
        guard !isDataError else {
            let names = [constraint.map { "constraint \($0)" }, table.map { "table \($0)" }, column.map { "column \($0)" }].compactMap { $0 }
            return text + ": a value was refused" + (names.isEmpty ? "" : " (\(names.joined(separator: ", ")))")
        }
        text += ": \(message)"
        if let hint { text += " (hint: \(hint))" }
        return text
    }

    static func client(_ message: String) -> PGError {
        PGError(kind: .client, message: message)
    }
}
