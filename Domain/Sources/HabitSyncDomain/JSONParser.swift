import Foundation

/// A strict, allocation-light JSON parser into `JSONValue` (RFC 8259). Push bodies are parsed
/// with it: Foundation's JSONDecoder, driven through `Decodable` by trial and error, was a
/// fifth of the server's time under push load.
public struct JSONParser {
    public struct SyntaxError: Error, Equatable {
        public let offset: Int
        /// Set when the text is valid so far but exceeds `Limits`: the document is refused
        /// before its tree can grow to many times the body's size.
        public var limit: String? = nil
    }

    /// Bounds on the tree a document may build. Every push field fits well inside them (a
    /// batch holds at most 10,000 changes, a record's arrays at most 1,000 items); a body
    /// of 8 MiB of `[0,0,0,…]` would otherwise become four million values.
    public struct Limits: Sendable {
        public var depth = 64
        public var arrayItems = 10_000
        public var objectFields = 1_000
        public var values = 250_000
        public init() {}

        /// For files an administrator hands to a command (a legacy export): no request budget.
        public static var administrativeFile: Limits {
            var limits = Limits()
            limits.arrayItems = 10_000_000
            limits.objectFields = 100_000
            limits.values = 50_000_000
            return limits
        }
    }

    private let bytes: [UInt8]
    private let limits: Limits
    private var index = 0
    private var depth = 0
    private var values = 0

    public static func parse(_ data: Data, limits: Limits = Limits()) throws(SyntaxError) -> JSONValue {
        try parse(bytes: Array(data), limits: limits)
    }

    public static func parse(bytes: [UInt8], limits: Limits = Limits()) throws(SyntaxError) -> JSONValue {
        var parser = JSONParser(bytes: bytes, limits: limits)
        parser.skipWhitespace()
        let value = try parser.value()
        parser.skipWhitespace()
        guard parser.index == parser.bytes.count else { throw SyntaxError(offset: parser.index) }
        return value
    }

    private init(bytes: [UInt8], limits: Limits) {
        self.bytes = bytes
        self.limits = limits
    }

    private var error: SyntaxError { SyntaxError(offset: index) }

    private func exceeded(_ what: String) -> SyntaxError { SyntaxError(offset: index, limit: what) }

    private mutating func skipWhitespace() {
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 { index += 1 }
    }

    private mutating func value() throws(SyntaxError) -> JSONValue {
        guard index < bytes.count else { throw error }
        values += 1
        guard values <= limits.values else { throw exceeded("more than \(limits.values) JSON values in one document") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        default: return .number(try number())
        }
    }

    private mutating func literal(_ word: String) throws(SyntaxError) {
        let expected = Array(word.utf8)
        guard index + expected.count <= bytes.count, Array(bytes[index..<(index + expected.count)]) == expected else { throw error }
        index += expected.count
    }

    private mutating func object() throws(SyntaxError) -> JSONValue {
        depth += 1
        guard depth <= limits.depth else { throw exceeded("nesting deeper than \(limits.depth) levels") }
        defer { depth -= 1 }
        index += 1
        var fields: [String: JSONValue] = [:]
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object(fields) }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error }
            let key = try string()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error }
            index += 1
            skipWhitespace()
            fields[key] = try value()
            guard fields.count <= limits.objectFields else { throw exceeded("more than \(limits.objectFields) fields in one object") }
            skipWhitespace()
            guard index < bytes.count else { throw error }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            guard bytes[index] == UInt8(ascii: "}") else { throw error }
            index += 1
            return .object(fields)
        }
    }

    private mutating func array() throws(SyntaxError) -> JSONValue {
        depth += 1
        guard depth <= limits.depth else { throw exceeded("nesting deeper than \(limits.depth) levels") }
        defer { depth -= 1 }
        index += 1
        var items: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
        while true {
            skipWhitespace()
            items.append(try value())
            guard items.count <= limits.arrayItems else { throw exceeded("more than \(limits.arrayItems) items in one array") }
            skipWhitespace()
            guard index < bytes.count else { throw error }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            guard bytes[index] == UInt8(ascii: "]") else { throw error }
            index += 1
            return .array(items)
        }
    }

    private mutating func string() throws(SyntaxError) -> String {
        index += 1  // the opening quote
        let start = index
        // Fast path: no escapes.
        while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\"), bytes[index] >= 0x20 { index += 1 }
        guard index < bytes.count else { throw error }
        if bytes[index] == UInt8(ascii: "\"") {
            defer { index += 1 }
            guard let text = String(validating: bytes[start..<index], as: UTF8.self) else { throw error }
            return text
        }
        var scalars = Array(bytes[start..<index])
        while true {
            guard index < bytes.count else { throw error }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") { index += 1; break }
            guard byte >= 0x20 else { throw error }
            if byte != UInt8(ascii: "\\") { scalars.append(byte); index += 1; continue }
            index += 1
            guard index < bytes.count else { throw error }
            let escape = bytes[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""): scalars.append(0x22)
            case UInt8(ascii: "\\"): scalars.append(0x5C)
            case UInt8(ascii: "/"): scalars.append(0x2F)
            case UInt8(ascii: "b"): scalars.append(0x08)
            case UInt8(ascii: "f"): scalars.append(0x0C)
            case UInt8(ascii: "n"): scalars.append(0x0A)
            case UInt8(ascii: "r"): scalars.append(0x0D)
            case UInt8(ascii: "t"): scalars.append(0x09)
            case UInt8(ascii: "u"):
                var code = try hex4()
                if (0xD800...0xDBFF).contains(code) {
                    guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else { throw error }
                    index += 2
                    let low = try hex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw error }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(code) {
                    throw error
                }
                guard let scalar = Unicode.Scalar(code) else { throw error }
                scalars.append(contentsOf: Array(String(Character(scalar)).utf8))
            default:
                throw error
            }
        }
        guard let text = String(validating: scalars, as: UTF8.self) else { throw error }
        return text
    }

    private mutating func hex4() throws(SyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case 48...57: digit = byte - 48
            case 97...102: digit = byte - 87
            case 65...70: digit = byte - 55
            default: throw error
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private mutating func number() throws(SyntaxError) -> Double {
        let start = index
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, (48...57).contains(bytes[index]) else { throw error }
        if bytes[index] == 48 { index += 1 } else { while index < bytes.count, (48...57).contains(bytes[index]) { index += 1 } }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, (48...57).contains(bytes[index]) else { throw error }
            while index < bytes.count, (48...57).contains(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, (48...57).contains(bytes[index]) else { throw error }
            while index < bytes.count, (48...57).contains(bytes[index]) { index += 1 }
        }
        guard let text = String(validating: bytes[start..<index], as: UTF8.self), let value = Double(text), value.isFinite else { throw error }
        return value
    }
}
