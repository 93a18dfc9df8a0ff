import Foundation

/// A field's value as a record holds it, typed so that the wire and the store render it from
/// one place: its canonical JSON here (`canonical`), its text for a PostgreSQL column in the
/// store. Nil payloads are null.
public enum FieldValue: Sendable, Equatable {
    case text(String?)
    case integer(Int?)
    case number(Double?)
    case bool(Bool?)
    case uuid(UUID?)
    case date(LocalDate?)
    case timestamp(Date?)
    case texts([String]?)
    case timestamps([Date]?)

    /// The value as the server stores and pulls return it (the record functions of the
    /// migrations): UUIDs in lower case, times in UTC to the millisecond, null when empty.
    public var canonical: JSONValue {
        switch self {
        case .text(let value): value.map { .string($0) } ?? .null
        case .integer(let value): value.map { .number(Double($0)) } ?? .null
        case .number(let value): value.map { .number($0) } ?? .null
        case .bool(let value): value.map { .bool($0) } ?? .null
        case .uuid(let value): value.map { .string($0.uuidString.lowercased()) } ?? .null
        case .date(let value): value.map { .string($0.description) } ?? .null
        case .timestamp(let value): value.map { .string(WireTime.format($0)) } ?? .null
        case .texts(let values): values.map { .array($0.map { .string($0) }) } ?? .null
        case .timestamps(let values): values.map { .array($0.map { .string(WireTime.format($0)) }) } ?? .null
        }
    }
}
