import Foundation

/// JSON's scalars as text: what `JSONObjectWriter` and `JSONValue.jsonText` are made of.
public enum JSONText {
    private static let hex = Array("0123456789abcdef".unicodeScalars)

    public static func string(_ text: String) -> String {
        var out = "\""
        out.reserveCapacity(text.utf8.count + 2)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                // \u00XX without printf (issue 46: no number goes through printf per request).
                out += "\\u00"
                out.unicodeScalars.append(hex[Int(scalar.value >> 4)])
                out.unicodeScalars.append(hex[Int(scalar.value & 0xF)])
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    public static func number(_ value: Double) -> String {
        if value.rounded() == value && abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }
}

extension JSONValue {
    /// The value as compact JSON text, object keys sorted.
    public var jsonText: String {
        switch self {
        case .null: "null"
        case .bool(let flag): flag ? "true" : "false"
        case .number(let number): JSONText.number(number)
        case .string(let text): JSONText.string(text)
        case .array(let items): "[" + items.map(\.jsonText).joined(separator: ",") + "]"
        case .object(let fields):
            fields.keys.sorted().reduce(into: JSONObjectWriter()) { writer, name in writer.add(name, json: (fields[name] ?? .null).jsonText) }.json
        }
    }
}
