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
    /// Byte by byte, like `encode`: every byte the syntax names (`{},"\` and white space) is
    /// ASCII and no byte of a multi-byte sequence is, so an element's bytes are copied whole.
    /// (Scalar by scalar with Foundation's trimming, a stored day's dozen additions cost more
    /// to decode than the day's statement cost to run.)
    static func decode(_ text: String) -> [String?]? {
        var text = text
        return text.withUTF8 { bytes -> [String?]? in
            var start = 0
            // Arrays with non-default bounds print a "[1:3]=" prefix.
            if bytes.first == UInt8(ascii: "[") {
                guard let eq = bytes.firstIndex(of: UInt8(ascii: "=")) else { return nil }
                start = eq + 1
            }
            guard bytes.count - start >= 2, bytes[start] == UInt8(ascii: "{"), bytes[bytes.count - 1] == UInt8(ascii: "}") else { return nil }
            let end = bytes.count - 1
            var result: [String?] = []
            if start + 1 == end { return result }
            var current: [UInt8] = []
            var quoted = false, wasQuoted = false, escaped = false
            for byte in bytes[(start + 1)..<end] {
                if escaped {
                    current.append(byte)
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    quoted.toggle()
                    wasQuoted = true
                } else if byte == UInt8(ascii: ",") && !quoted {
                    result.append(finish(current, wasQuoted))
                    current.removeAll(keepingCapacity: true)
                    wasQuoted = false
                } else if byte == UInt8(ascii: "{") && !quoted {
                    return nil  // multi-dimensional arrays are not supported
                } else if !quoted && isSpace(byte) && (current.isEmpty || wasQuoted) {
                    continue  // white space around an element, not in it
                } else {
                    current.append(byte)
                }
            }
            if quoted || escaped { return nil }
            result.append(finish(current, wasQuoted))
            return result
        }
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || (0x09...0x0D).contains(byte)
    }

    /// An element's text: unquoted, `NULL` is the null and white space around it is not part
    /// of it (PostgreSQL's own, ASCII white space).
    private static func finish(_ bytes: [UInt8], _ wasQuoted: Bool) -> String? {
        if wasQuoted { return String(decoding: bytes, as: UTF8.self) }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) }) else { return "" }
        let trimmed = bytes[first...last]
        if trimmed.elementsEqual("NULL".utf8) { return nil }
        return String(decoding: trimmed, as: UTF8.self)
    }
}
