/// What a pushed change does to its record.
public enum ChangeOperation: String, Sendable {
    case upsert
    case delete
}
