/// Why one pushed change was refused: a stable code, the field when there is one, and a
/// message a developer can act on. The rest of the batch still applies.
public struct ChangeRejection: Error, Sendable, Equatable {
    public enum Code: String, Sendable {
        case invalidField = "invalid_field"
        case unknownField = "unknown_field"
        case unknownCollection = "unknown_collection"
        case unknownReference = "unknown_reference"
        case immutableRecord = "immutable_record"
        case invalidTransition = "invalid_transition"
        case derivedCollection = "derived_collection"
        case timestampInFuture = "timestamp_in_future"
        /// PostgreSQL refused the change although it passed validation (a rule the server
        /// does not know yet, or a bug): the rest of the batch is stored all the same.
        case refusedByDatabase = "refused_by_database"
    }

    public let code: Code
    public let field: String?
    public let message: String

    public init(_ code: Code, field: String? = nil, _ message: String) {
        self.code = code
        self.field = field
        self.message = message
    }
}
