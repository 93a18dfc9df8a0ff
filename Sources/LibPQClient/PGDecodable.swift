import Foundation

/// A Swift type that a column's text value can be decoded into.
public protocol PGDecodable: Sendable {
    /// Whether a column of this PostgreSQL type can be decoded as `Self`.
    static func accepts(_ type: PGTypeOID) -> Bool
    /// Decodes the server's text representation; nil when it is not a valid value.
    init?(pgText text: String, type: PGTypeOID)
}

extension String: PGDecodable {
    static let textTypes: Set<PGTypeOID> = [.text, .varchar, .bpchar, .char, .name, .unknown, .json, .jsonb, .uuid, .date, .time, .interval, .numeric]
    public static func accepts(_ type: PGTypeOID) -> Bool { textTypes.contains(type) }
    public init?(pgText text: String, type: PGTypeOID) { self = text }
}

extension Int: PGDecodable {
    public static func accepts(_ type: PGTypeOID) -> Bool { type == .int2 || type == .int4 || type == .int8 || type == .oid }
    public init?(pgText text: String, type: PGTypeOID) { self.init(text) }
}

extension Int64: PGDecodable {
    public static func accepts(_ type: PGTypeOID) -> Bool { Int.accepts(type) }
    public init?(pgText text: String, type: PGTypeOID) { self.init(text) }
}

extension Int32: PGDecodable {
    public static func accepts(_ type: PGTypeOID) -> Bool { type == .int2 || type == .int4 }
    public init?(pgText text: String, type: PGTypeOID) { self.init(text) }
}

extension Double: PGDecodable {
    public static func accepts(_ type: PGTypeOID) -> Bool { type == .float4 || type == .float8 || type == .numeric || Int.accepts(type) }
    public init?(pgText text: String, type: PGTypeOID) {
        switch text {
        case "NaN": self = .nan
        case "Infinity": self = .infinity
        case "-Infinity": self = -.infinity
        default: self.init(text)
        }
    }
}

extension Bool: PGDecodable {
    public static func accepts(_ type: PGTypeOID) -> Bool { type == .bool }
    public init?(pgText text: String, type: PGTypeOID) {
        switch text {
        case "t": self = true
        case "f": self = false
        default: return nil
        }
    }
}

extension UUID: PGDecodable {
    public static func accepts(_ type: PGTypeOID) -> Bool { type == .uuid || type == .text }
    public init?(pgText text: String, type: PGTypeOID) {
        guard let uuid = PGUUIDText.parse(text) else { return nil }
        self = uuid
    }
}

extension Date: PGDecodable {
    public static func accepts(_ type: PGTypeOID) -> Bool { type == .timestamptz || type == .timestamp }
    public init?(pgText text: String, type: PGTypeOID) {
        guard let date = PGTimestamp.parse(text) else { return nil }
        self = date
    }
}

extension PGBytes: PGDecodable {
    public static func accepts(_ type: PGTypeOID) -> Bool { type == .bytea }
    /// `bytea` text output is hex: `\x0a1b…`.
    public init?(pgText text: String, type: PGTypeOID) {
        let utf8 = Array(text.utf8)
        guard utf8.count >= 2, utf8[0] == 92, utf8[1] == 120, utf8.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity((utf8.count - 2) / 2)
        var index = 2
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 48...57: return c - 48
            case 97...102: return c - 87
            case 65...70: return c - 55
            default: return nil
            }
        }
        while index < utf8.count {
            guard let high = nibble(utf8[index]), let low = nibble(utf8[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        self.init(bytes)
    }
}

extension PGJSON: PGDecodable {
    public static func accepts(_ type: PGTypeOID) -> Bool { type == .json || type == .jsonb }
    public init?(pgText text: String, type: PGTypeOID) { self.init(text) }
}

/// The element types an array column can be decoded into, with their array OIDs.
public protocol PGDecodableArrayElement: PGDecodable {
    static func acceptsArray(_ type: PGTypeOID) -> Bool
}

extension String: PGDecodableArrayElement {
    public static func acceptsArray(_ type: PGTypeOID) -> Bool { type == .textArray || type == .varcharArray }
}
extension Int: PGDecodableArrayElement {
    public static func acceptsArray(_ type: PGTypeOID) -> Bool { type == .int8Array || type == .int4Array || type == .int2Array }
}
extension Int64: PGDecodableArrayElement {
    public static func acceptsArray(_ type: PGTypeOID) -> Bool { Int.acceptsArray(type) }
}
extension Int32: PGDecodableArrayElement {
    public static func acceptsArray(_ type: PGTypeOID) -> Bool { type == .int4Array || type == .int2Array }
}
extension Double: PGDecodableArrayElement {
    public static func acceptsArray(_ type: PGTypeOID) -> Bool { type == .float8Array }
}
extension Bool: PGDecodableArrayElement {
    public static func acceptsArray(_ type: PGTypeOID) -> Bool { type == .boolArray }
}
extension UUID: PGDecodableArrayElement {
    public static func acceptsArray(_ type: PGTypeOID) -> Bool { type == .uuidArray }
}
extension Date: PGDecodableArrayElement {
    public static func acceptsArray(_ type: PGTypeOID) -> Bool { type == .timestamptzArray }
}

extension Array: PGDecodable where Element: PGDecodableArrayElement {
    public static func accepts(_ type: PGTypeOID) -> Bool { Element.acceptsArray(type) }
    public init?(pgText text: String, type: PGTypeOID) {
        guard let items = PGArrayLiteral.decode(text) else { return nil }
        var result: [Element] = []
        result.reserveCapacity(items.count)
        for item in items {
            guard let item, let element = Element(pgText: item, type: type) else { return nil }
            result.append(element)
        }
        self = result
    }
}
