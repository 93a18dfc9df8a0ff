/// A migration problem, with a stable machine-readable code and a message that names the file.
public struct MigrationError: Error, Sendable, CustomStringConvertible, Equatable {
    public enum Code: String, Sendable {
        case invalidFileName = "invalid_file_name"
        case duplicateVersion = "duplicate_version"
        case directoryUnreadable = "directory_unreadable"
        case modifiedFile = "modified_file"
        case missingFile = "missing_file"
        case outOfOrder = "out_of_order"
        case statementFailed = "statement_failed"
        case lockTimeout = "lock_timeout"
        case behindPooler = "behind_pooler"
        case pending = "pending_migrations"
        case baselineRefused = "baseline_refused"
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
