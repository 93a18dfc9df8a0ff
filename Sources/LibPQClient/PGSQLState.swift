/// A five-character SQLSTATE code. An open set: PostgreSQL adds codes over time, so this is a
/// struct with well-known constants rather than a closed enum.
public struct PGSQLState: Hashable, Sendable, CustomStringConvertible {
    public let code: String

    public init(_ code: String) { self.code = code }

    public var description: String { code }

    /// The class: the first two characters (`23` integrity constraint violation, `08` connection…).
    public var errorClass: Substring { code.prefix(2) }

    public static let uniqueViolation = PGSQLState("23505")
    public static let foreignKeyViolation = PGSQLState("23503")
    public static let dataException = PGSQLState("22000")
    public static let checkViolation = PGSQLState("23514")
    public static let notNullViolation = PGSQLState("23502")
    public static let exclusionViolation = PGSQLState("23P01")
    public static let syntaxError = PGSQLState("42601")
    public static let undefinedTable = PGSQLState("42P01")
    public static let undefinedObject = PGSQLState("42704")
    public static let duplicateObject = PGSQLState("42710")
    public static let insufficientPrivilege = PGSQLState("42501")
    public static let undefinedFunction = PGSQLState("42883")
    public static let featureNotSupported = PGSQLState("0A000")
    public static let queryCanceled = PGSQLState("57014")
    public static let adminShutdown = PGSQLState("57P01")
    public static let cannotConnectNow = PGSQLState("57P03")
    public static let lockNotAvailable = PGSQLState("55P03")
    public static let serializationFailure = PGSQLState("40001")
    public static let deadlockDetected = PGSQLState("40P01")
    public static let characterNotInRepertoire = PGSQLState("22021")
    public static let untranslatableCharacter = PGSQLState("22P05")
    public static let invalidTextRepresentation = PGSQLState("22P02")
    public static let invalidDatetimeFormat = PGSQLState("22007")
    public static let datetimeFieldOverflow = PGSQLState("22008")
    public static let numericValueOutOfRange = PGSQLState("22003")
    public static let stringDataRightTruncation = PGSQLState("22001")
    public static let insufficientResources = PGSQLState("53000")
    public static let tooManyConnections = PGSQLState("53300")
}
