/// PostgreSQL type OIDs the client binds and decodes (from `pg_type`; stable across versions).
public struct PGTypeOID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(_ rawValue: UInt32) { self.rawValue = rawValue }

    public static let unspecified = PGTypeOID(0)
    public static let bool = PGTypeOID(16)
    public static let bytea = PGTypeOID(17)
    public static let char = PGTypeOID(18)
    public static let name = PGTypeOID(19)
    public static let int8 = PGTypeOID(20)
    public static let int2 = PGTypeOID(21)
    public static let int4 = PGTypeOID(23)
    public static let text = PGTypeOID(25)
    public static let oid = PGTypeOID(26)
    public static let json = PGTypeOID(114)
    public static let float4 = PGTypeOID(700)
    public static let float8 = PGTypeOID(701)
    public static let unknown = PGTypeOID(705)
    public static let bpchar = PGTypeOID(1042)
    public static let varchar = PGTypeOID(1043)
    public static let date = PGTypeOID(1082)
    public static let time = PGTypeOID(1083)
    public static let timestamp = PGTypeOID(1114)
    public static let timestamptz = PGTypeOID(1184)
    public static let interval = PGTypeOID(1186)
    public static let numeric = PGTypeOID(1700)
    public static let uuid = PGTypeOID(2950)
    public static let jsonb = PGTypeOID(3802)
    public static let boolArray = PGTypeOID(1000)
    public static let byteaArray = PGTypeOID(1001)
    public static let int2Array = PGTypeOID(1005)
    public static let int4Array = PGTypeOID(1007)
    public static let textArray = PGTypeOID(1009)
    public static let varcharArray = PGTypeOID(1015)
    public static let int8Array = PGTypeOID(1016)
    public static let float8Array = PGTypeOID(1022)
    public static let dateArray = PGTypeOID(1182)
    public static let timestamptzArray = PGTypeOID(1185)
    public static let uuidArray = PGTypeOID(2951)
    public static let jsonbArray = PGTypeOID(3807)

    private static let names: [UInt32: String] = [
        16: "bool", 17: "bytea", 18: "char", 19: "name", 20: "int8", 21: "int2", 23: "int4", 25: "text",
        26: "oid", 114: "json", 700: "float4", 701: "float8", 705: "unknown", 1042: "bpchar",
        1043: "varchar", 1082: "date", 1083: "time", 1114: "timestamp", 1184: "timestamptz",
        1186: "interval", 1700: "numeric", 2950: "uuid", 3802: "jsonb", 1000: "bool[]",
        1001: "bytea[]", 1005: "int2[]", 1007: "int4[]", 1009: "text[]", 1015: "varchar[]",
        1016: "int8[]", 1022: "float8[]", 1182: "date[]", 1185: "timestamptz[]",
        2951: "uuid[]", 3807: "jsonb[]",
    ]

    public var description: String { Self.names[rawValue] ?? "oid \(rawValue)" }
}
