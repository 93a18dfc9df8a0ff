import Foundation
import HabitSyncDomain
import SyncTestSupport
import Yams

/// Checks JSON values against the schemas of the repository's OpenAPI document: the subset of
/// JSON Schema 2020-12 that document uses ($ref, type (with "null"), enum, const, not,
/// required, properties, additionalProperties, items, min/maxItems, uniqueItems,
/// min/maxLength, pattern, minimum, maximum, exclusiveMinimum, anyOf, formats uuid, date,
/// date-time). A keyword it does not know fails loudly rather than passing silently.
struct OpenAPIValidator {
    let document: [String: Any]

    static let documentURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/HabitSyncServer/Resources/openapi.yaml")

    init(yaml: String) throws {
        guard let document = try Yams.load(yaml: yaml) as? [String: Any] else { throw ValidationError(path: "", message: "not a YAML mapping") }
        self.document = document
    }

    struct ValidationError: Error, CustomStringConvertible {
        let path: String
        let message: String
        var description: String { "\(path.isEmpty ? "$" : path): \(message)" }
    }

    /// The response schema for a path, method and status; nil when the status is not documented.
    func responseSchema(path: String, method: String, status: Int) -> [String: Any]?? {
        guard let paths = document["paths"] as? [String: Any], let operation = (paths[path] as? [String: Any])?[method.lowercased()] as? [String: Any],
            let responses = operation["responses"] as? [String: Any], var response = responses[String(status)] as? [String: Any]
        else { return nil }
        if let reference = response["$ref"] as? String { response = resolve(reference) }
        let content = (response["content"] as? [String: Any])?["application/json"] as? [String: Any]
        return .some(content?["schema"] as? [String: Any])
    }

    func schema(named name: String) -> [String: Any] { resolve("#/components/schemas/\(name)") }

    private func resolve(_ reference: String) -> [String: Any] {
        var node: Any = document
        for part in reference.dropFirst(2).split(separator: "/") { node = (node as? [String: Any])?[String(part)] ?? [:] }
        return node as? [String: Any] ?? [:]
    }

    func validate(_ value: JSONValue, against schema: [String: Any], path: String = "") -> [ValidationError] {
        var schema = schema
        if let reference = schema["$ref"] as? String {
            let extra = schema.filter { $0.key != "$ref" && $0.key != "description" }
            schema = resolve(reference).merging(extra) { _, new in new }
        }
        var errors: [ValidationError] = []
        func fail(_ message: String) { errors.append(ValidationError(path: path, message: message)) }
        let known: Set<String> = [
            "type", "enum", "const", "not", "required", "properties", "additionalProperties", "items", "minItems", "maxItems",
            "uniqueItems", "minLength", "maxLength", "pattern", "minimum", "maximum", "exclusiveMinimum", "anyOf", "format",
            "description", "default",
        ]
        for keyword in schema.keys where !known.contains(keyword) { fail("the validator does not know keyword \(keyword)") }

        if let types = (schema["type"] as? [String]) ?? (schema["type"] as? String).map({ [$0] }) {
            guard types.contains(where: { Self.matches(value, type: $0) }) else {
                fail("expected \(types.joined(separator: " or ")), got \(value.typeName)")
                return errors
            }
        }
        if let options = schema["enum"] as? [Any], !options.contains(where: { Self.equal($0, value) }) { fail("\(value.jsonText) is not one of the enum values") }
        if let constant = schema["const"], !Self.equal(constant, value) { fail("must equal \(constant)") }
        if let negated = schema["not"] as? [String: Any], validate(value, against: negated, path: path).isEmpty { fail("matches a schema it must not") }
        if let options = schema["anyOf"] as? [[String: Any]], !options.contains(where: { validate(value, against: $0, path: path).isEmpty }) {
            fail("matches none of anyOf: " + options.map { validate(value, against: $0, path: path).first?.description ?? "" }.joined(separator: " | "))
        }
        switch value {
        case .object(let object):
            for name in schema["required"] as? [String] ?? [] where object[name] == nil { fail("missing required \(name)") }
            let properties = schema["properties"] as? [String: Any] ?? [:]
            for (name, child) in object {
                if let property = properties[name] as? [String: Any] {
                    errors += validate(child, against: property, path: path + "." + name)
                } else if schema["additionalProperties"] as? Bool == false {
                    fail("unexpected property \(name)")
                }
            }
        case .array(let array):
            if let items = schema["items"] as? [String: Any] {
                for (index, item) in array.enumerated() { errors += validate(item, against: items, path: path + "[\(index)]") }
            }
            if let minimum = schema["minItems"] as? Int, array.count < minimum { fail("fewer than \(minimum) items") }
            if let maximum = schema["maxItems"] as? Int, array.count > maximum { fail("more than \(maximum) items") }
            if schema["uniqueItems"] as? Bool == true, Set(array.map(\.jsonText)).count != array.count { fail("items repeat") }
        case .string(let text):
            if let minimum = schema["minLength"] as? Int, text.unicodeScalars.count < minimum { fail("shorter than \(minimum)") }
            if let maximum = schema["maxLength"] as? Int, text.unicodeScalars.count > maximum { fail("longer than \(maximum)") }
            if let pattern = schema["pattern"] as? String, text.range(of: pattern, options: .regularExpression) == nil { fail("'\(text)' does not match \(pattern)") }
            switch schema["format"] as? String {
            case "uuid": if UUID(uuidString: text) == nil { fail("'\(text)' is not a uuid") }
            case "date": if LocalDate(text) == nil { fail("'\(text)' is not a date") }
            case "date-time": if WireTime.parse(text) == nil { fail("'\(text)' is not a date-time") }
            default: break
            }
        case .number(let number):
            if let minimum = Self.double(schema["minimum"]), number < minimum { fail("\(number) < minimum \(minimum)") }
            if let maximum = Self.double(schema["maximum"]), number > maximum { fail("\(number) > maximum \(maximum)") }
            if let minimum = Self.double(schema["exclusiveMinimum"]), number <= minimum { fail("\(number) ≤ exclusiveMinimum \(minimum)") }
        case .null, .bool:
            break
        }
        return errors
    }

    static func double(_ value: Any?) -> Double? {
        if let int = value as? Int { return Double(int) }
        return value as? Double
    }

    static func matches(_ value: JSONValue, type: String) -> Bool {
        switch (type, value) {
        case ("null", .null), ("boolean", .bool), ("string", .string), ("object", .object), ("array", .array), ("number", .number): true
        case ("integer", .number(let number)): number.rounded() == number
        default: false
        }
    }

    /// A YAML value (enum member, const) against a JSON value.
    static func equal(_ expected: Any, _ value: JSONValue) -> Bool {
        switch value {
        case .null: return expected is NSNull
        case .string(let text): return (expected as? String) == text
        case .number(let number): return double(expected) == number
        case .bool(let flag): return (expected as? Bool) == flag
        default: return false
        }
    }
}
