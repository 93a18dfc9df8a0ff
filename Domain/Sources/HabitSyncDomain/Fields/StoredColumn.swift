/// A table column a record field is stored in, and its PostgreSQL type.
public struct StoredColumn: Sendable, Equatable {
    public enum SQLType: String, Sendable, CaseIterable {
        case text, int2, int4, float8, bool, uuid, date, time, timestamptz
        case textArray = "text[]"
        case timestamptzArray = "timestamptz[]"
    }

    public let name: String
    public let type: SQLType

    public init(_ name: String, _ type: SQLType) {
        self.name = name
        self.type = type
    }
}
