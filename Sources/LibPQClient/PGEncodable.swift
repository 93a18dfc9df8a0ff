import Foundation

/// One bound parameter: its type and its bytes (text format, or binary for `bytea`).
/// `nil` bytes are SQL NULL.
public struct PGBind: Sendable {
    public var type: PGTypeOID
    public var bytes: [UInt8]?
    public var isBinary: Bool

    public init(type: PGTypeOID, bytes: [UInt8]?, isBinary: Bool = false) {
        self.type = type
        self.bytes = bytes
        self.isBinary = isBinary
    }

    public init(type: PGTypeOID, text: String) {
        self.init(type: type, bytes: Array(text.utf8))
    }

    public static func null(_ type: PGTypeOID = .unspecified) -> PGBind {
        PGBind(type: type, bytes: nil)
    }
}

/// A Swift value that can be sent as a query parameter.
public protocol PGEncodable: Sendable {
    func pgBind() -> PGBind
}

/// A value that can be an element of an array parameter (`text[]`, `uuid[]`, …), which is how
/// one statement carries a whole batch of rows (`unnest($1::uuid[], $2::text[], …)`).
public protocol PGArrayElement: PGEncodable {
    static var pgArrayType: PGTypeOID { get }
    /// The element as it appears inside an array literal, unquoted; nil for NULL.
    var pgArrayElementText: String? { get }
}

extension String: PGArrayElement {
    public func pgBind() -> PGBind { PGBind(type: .text, text: self) }
    public static var pgArrayType: PGTypeOID { .textArray }
    public var pgArrayElementText: String? { self }
}

extension Substring: PGEncodable {
    public func pgBind() -> PGBind { String(self).pgBind() }
}

extension Int: PGArrayElement {
    public func pgBind() -> PGBind { PGBind(type: .int8, text: String(self)) }
    public static var pgArrayType: PGTypeOID { .int8Array }
    public var pgArrayElementText: String? { String(self) }
}

extension Int64: PGArrayElement {
    public func pgBind() -> PGBind { PGBind(type: .int8, text: String(self)) }
    public static var pgArrayType: PGTypeOID { .int8Array }
    public var pgArrayElementText: String? { String(self) }
}

extension Int32: PGArrayElement {
    public func pgBind() -> PGBind { PGBind(type: .int4, text: String(self)) }
    public static var pgArrayType: PGTypeOID { .int4Array }
    public var pgArrayElementText: String? { String(self) }
}

extension Int16: PGArrayElement {
    public func pgBind() -> PGBind { PGBind(type: .int2, text: String(self)) }
    public static var pgArrayType: PGTypeOID { .int2Array }
    public var pgArrayElementText: String? { String(self) }
}

extension Double: PGArrayElement {
    public func pgBind() -> PGBind { PGBind(type: .float8, text: text) }
    public static var pgArrayType: PGTypeOID { .float8Array }
    public var pgArrayElementText: String? { text }
    private var text: String {
        if isNaN { return "NaN" }
        if isInfinite { return self < 0 ? "-Infinity" : "Infinity" }
        return "\(self)"  // shortest representation that round-trips
    }
}

extension Bool: PGArrayElement {
    public func pgBind() -> PGBind { PGBind(type: .bool, text: self ? "t" : "f") }
    public static var pgArrayType: PGTypeOID { .boolArray }
    public var pgArrayElementText: String? { self ? "t" : "f" }
}

extension UUID: PGArrayElement {
    public func pgBind() -> PGBind { PGBind(type: .uuid, bytes: PGUUIDText.bytes(self)) }
    public static var pgArrayType: PGTypeOID { .uuidArray }
    public var pgArrayElementText: String? { PGUUIDText.format(self) }
}

extension Date: PGArrayElement {
    public func pgBind() -> PGBind { PGBind(type: .timestamptz, text: PGTimestamp.format(self)) }
    public static var pgArrayType: PGTypeOID { .timestamptzArray }
    public var pgArrayElementText: String? { PGTimestamp.format(self) }
}

/// `bytea`, sent in binary so that no escaping is involved.
public struct PGBytes: PGEncodable, Hashable {
    public var bytes: [UInt8]
    public init(_ bytes: [UInt8]) { self.bytes = bytes }
    public func pgBind() -> PGBind { PGBind(type: .bytea, bytes: bytes, isBinary: true) }
}

extension Data: PGEncodable {
    public func pgBind() -> PGBind { PGBind(type: .bytea, bytes: Array(self), isBinary: true) }
}

/// A JSON document, bound as `jsonb`. The text must be valid JSON; PostgreSQL checks it.
public struct PGJSON: PGArrayElement, Hashable {
    public var text: String
    public init(_ text: String) { self.text = text }
    public func pgBind() -> PGBind { PGBind(type: .jsonb, text: text) }
    public static var pgArrayType: PGTypeOID { .jsonbArray }
    public var pgArrayElementText: String? { text }
}

extension Optional: PGEncodable where Wrapped: PGEncodable {
    public func pgBind() -> PGBind {
        switch self {
        case .some(let value): return value.pgBind()
        case .none: return .null()
        }
    }
}

extension Optional: PGArrayElement where Wrapped: PGArrayElement {
    public static var pgArrayType: PGTypeOID { Wrapped.pgArrayType }
    public var pgArrayElementText: String? { self?.pgArrayElementText }
}

extension Array: PGEncodable where Element: PGArrayElement {
    public func pgBind() -> PGBind {
        // A closure, not `\.pgArrayElementText`: a key path over a generic element is built at
        // run time on every call (metadata lookups by mangled name, 4 % of a check-in's CPU).
        PGBind(type: Element.pgArrayType, text: PGArrayLiteral.encode(self.map { $0.pgArrayElementText }))
    }
}

/// PostgreSQL's one-dimensional array literal: `{"a","b \"c\"",NULL}`.
enum PGArrayLiteral {
    /// Built as UTF-8 bytes: `"` and `\` are ASCII, and no byte of a
    /// multi-byte UTF-8 sequence is, so escaping byte by byte is exact (and a fraction of the
    /// cost of appending scalar by scalar, which was a sixth of the server's push CPU).
    static func encode(_ elements: [String?]) -> String {
        let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\"), comma = UInt8(ascii: ",")
        var out: [UInt8] = []
        out.reserveCapacity(elements.reduce(2) { $0 + ($1?.utf8.count ?? 4) + 3 })
        out.append(UInt8(ascii: "{"))
        for (index, element) in elements.enumerated() {
            if index > 0 { out.append(comma) }
            guard var element else {
                out.append(contentsOf: "NULL".utf8)
                continue
            }
            out.append(quote)
            element.withUTF8 { bytes in
                for byte in bytes {
                    if byte == quote || byte == backslash { out.append(backslash) }
                    out.append(byte)
                }
            }
            out.append(quote)
        }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }

    /// Parses a one-dimensional array's text output. Returns nil when the text is not one.
    static func decode(_ text: String) -> [String?]? {
        var scalars = Substring(text).unicodeScalars[...]
        // Arrays with non-default bounds print a "[1:3]=" prefix.
        if scalars.first == "[" {
            guard let eq = scalars.firstIndex(of: "=") else { return nil }
            scalars = scalars[scalars.index(after: eq)...]
        }
        guard scalars.first == "{", scalars.last == "}" else { return nil }
        scalars = scalars.dropFirst().dropLast()
        var result: [String?] = []
        if scalars.isEmpty { return result }
        var iterator = scalars.makeIterator()
        var current = String.UnicodeScalarView()
        var quoted = false
        var wasQuoted = false
        var escaped = false
        while let scalar = iterator.next() {
            if escaped {
                current.append(scalar)
                escaped = false
            } else if scalar == "\\" {
                escaped = true
            } else if scalar == "\"" {
                quoted.toggle()
                wasQuoted = true
            } else if scalar == "," && !quoted {
                result.append(finish(current, wasQuoted))
                current = String.UnicodeScalarView()
                wasQuoted = false
            } else if scalar == "{" && !quoted {
                return nil  // multi-dimensional arrays are not supported
            } else {
                current.append(scalar)
            }
        }
        if quoted || escaped { return nil }
        result.append(finish(current, wasQuoted))
        return result
    }

    private static func finish(_ scalars: String.UnicodeScalarView, _ wasQuoted: Bool) -> String? {
        let value = String(scalars)
        if !wasQuoted && value == "NULL" { return nil }
        return wasQuoted ? value : value.trimmingCharacters(in: .whitespaces)
    }
}
