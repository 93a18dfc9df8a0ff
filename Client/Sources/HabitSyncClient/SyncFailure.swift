/// Why the server rejected a record's last edit: its machine-readable code (the server's
/// `ChangeRejection` codes), the field when there is one, and the message.
public struct SyncFailure: Sendable, Hashable {
    public let code: String
    public let field: String?
    public let message: String

    public init(code: String, field: String?, message: String) {
        self.code = code
        self.field = field
        self.message = message
    }
}
