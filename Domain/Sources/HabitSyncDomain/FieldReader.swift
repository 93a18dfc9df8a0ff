import Foundation

/// Reads a record's fields with their types and ranges, remembering which were read so that
/// any field left over is reported as unknown (a typo must not be silently dropped).
struct FieldReader {
    private let fields: [String: JSONValue]
    private let prefix: String
    let context: ValidationContext
    private var seen: Set<String> = []

    init(_ fields: [String: JSONValue], context: ValidationContext, prefix: String = "") {
        self.fields = fields
        self.context = context
        self.prefix = prefix
    }

    private func path(_ name: String) -> String { prefix + name }

    /// The value, or nil when absent or null.
    private mutating func value(_ name: String) -> JSONValue? {
        seen.insert(name)
        guard let value = fields[name], value != .null else { return nil }
        return value
    }

    private func invalid(_ name: String, _ rule: String) -> ChangeRejection {
        ChangeRejection(.invalidField, field: path(name), "\(path(name)) \(rule)")
    }

    private func wrongType(_ name: String, _ expected: String, _ value: JSONValue) -> ChangeRejection {
        invalid(name, "must be \(expected), not \(value.typeName)")
    }

    func required<T>(_ name: String, _ value: T?) throws(ChangeRejection) -> T {
        guard let value else { throw invalid(name, "is required") }
        return value
    }

    /// A string field. Control characters are refused (`paragraphs` lets line feeds and tabs
    /// through); `length` counts Unicode scalars as `char_length` does, after removing leading
    /// and trailing spaces when `trimmed`, as `btrim` does (see `TextRules`).
    mutating func string(_ name: String, length: ClosedRange<Int>? = nil, trimmed: Bool = false, paragraphs: Bool = false) throws(ChangeRejection) -> String? {
        guard let value = value(name) else { return nil }
        guard case .string(let text) = value else { throw wrongType(name, "a string", value) }
        try checkText(name, text, paragraphs: paragraphs)
        if let length {
            let measured = trimmed ? TextRules.trimmingSpaces(text).count : TextRules.length(text)
            guard length.contains(measured) else {
                throw invalid(name, "must be \(length.lowerBound)–\(length.upperBound) characters\(trimmed ? " without leading and trailing spaces" : ""), got \(measured)")
            }
        }
        return text
    }

    func checkText(_ name: String, _ text: String, paragraphs: Bool = false) throws(ChangeRejection) {
        if let (scalar, offset) = TextRules.firstControlCharacter(in: text, allowingParagraphs: paragraphs) {
            throw invalid(name, "must not contain control characters (\(TextRules.codePoint(scalar)) at character \(offset + 1))")
        }
    }

    mutating func oneOf(_ name: String, _ allowed: [String]) throws(ChangeRejection) -> String? {
        guard let text = try string(name) else { return nil }
        guard allowed.contains(text) else { throw invalid(name, "must be one of \(allowed.joined(separator: ", ")), not '\(String(text.unicodeScalars.prefix(100)))'") }
        return text
    }

    mutating func integer(_ name: String, range: ClosedRange<Int>) throws(ChangeRejection) -> Int? {
        guard let value = value(name) else { return nil }
        guard case .number(let number) = value else { throw wrongType(name, "an integer", value) }
        guard number.isFinite, number.rounded() == number, number >= -2_147_483_648, number <= 2_147_483_647 else {
            throw invalid(name, "must be a whole number, got \(number)")
        }
        guard range.contains(Int(number)) else { throw invalid(name, "must be \(Self.describe(range)), got \(Int(number))") }
        return Int(number)
    }

    mutating func number(_ name: String, range: ClosedRange<Double>) throws(ChangeRejection) -> Double? {
        guard let value = value(name) else { return nil }
        guard case .number(let number) = value else { throw wrongType(name, "a number", value) }
        guard number.isFinite, range.contains(number) else { throw invalid(name, "must be between \(range.lowerBound) and \(range.upperBound), got \(number)") }
        return number
    }

    mutating func bool(_ name: String) throws(ChangeRejection) -> Bool? {
        guard let value = value(name) else { return nil }
        guard case .bool(let flag) = value else { throw wrongType(name, "true or false", value) }
        return flag
    }

    /// A timestamp in years `LocalDate.recordYears`. An `event` time (when something
    /// happened) may not lie further ahead than the allowed clock skew.
    mutating func timestamp(_ name: String, event: Bool = false) throws(ChangeRejection) -> Date? {
        guard let value = value(name) else { return nil }
        guard case .string(let text) = value else { throw wrongType(name, "an RFC 3339 timestamp string", value) }
        return try parseTimestamp(name, text, event: event)
    }

    func parseTimestamp(_ name: String, _ text: String, event: Bool) throws(ChangeRejection) -> Date {
        guard let date = WireTime.parse(text, years: LocalDate.recordYears) else {
            throw invalid(
                name,
                "must be an RFC 3339 timestamp with an offset in years \(LocalDate.recordYears.lowerBound)–\(LocalDate.recordYears.upperBound), such as 2026-11-20T08:15:30.123Z, not '\(String(text.unicodeScalars.prefix(40)))'"
            )
        }
        if event, date > context.latestAcceptedTime {
            throw ChangeRejection(
                .timestampInFuture, field: path(name),
                "\(path(name)) is \(WireTime.format(date)), later than the server's clock allows (now \(WireTime.format(context.now)) plus \(Int(context.maximumSkew)) s); check the device's clock")
        }
        return date
    }

    mutating func localDate(_ name: String) throws(ChangeRejection) -> LocalDate? {
        guard let value = value(name) else { return nil }
        guard case .string(let text) = value else { throw wrongType(name, "a yyyy-MM-dd date string", value) }
        guard let date = LocalDate(text, years: LocalDate.recordYears) else {
            throw invalid(
                name, "must be a real calendar date yyyy-MM-dd in years \(LocalDate.recordYears.lowerBound)–\(LocalDate.recordYears.upperBound), not '\(String(text.unicodeScalars.prefix(40)))'")
        }
        return date
    }

    mutating func uuid(_ name: String) throws(ChangeRejection) -> UUID? {
        guard let value = value(name) else { return nil }
        guard case .string(let text) = value, let id = UUID(uuidString: text) else { throw invalid(name, "must be a UUID") }
        return id
    }

    mutating func array(_ name: String, maxCount: Int) throws(ChangeRejection) -> [JSONValue]? {
        guard let value = value(name) else { return nil }
        guard case .array(let items) = value else { throw wrongType(name, "an array", value) }
        guard items.count <= maxCount else { throw invalid(name, "may hold at most \(maxCount) items, got \(items.count)") }
        return items
    }

    mutating func object(_ name: String) throws(ChangeRejection) -> [String: JSONValue]? {
        guard let value = value(name) else { return nil }
        guard case .object(let fields) = value else { throw wrongType(name, "an object", value) }
        return fields
    }

    func element(_ name: String, _ index: Int, _ rule: String) -> ChangeRejection {
        ChangeRejection(.invalidField, field: "\(path(name))[\(index)]", "\(path(name))[\(index)] \(rule)")
    }

    func fail(_ name: String, _ rule: String) -> ChangeRejection { invalid(name, rule) }

    /// Throws for the first field (alphabetically) that no rule read.
    func finish() throws(ChangeRejection) {
        if let unknown = fields.keys.filter({ !seen.contains($0) }).sorted().first {
            let name = TextRules.storable(String(unknown.unicodeScalars.prefix(100)))
            throw ChangeRejection(.unknownField, field: path(name), "\(path(name)) is not a field of this collection")
        }
    }

    static func describe(_ range: ClosedRange<Int>) -> String {
        if range.upperBound == Int.max { return "≥ \(range.lowerBound)" }
        return "\(range.lowerBound)–\(range.upperBound)"
    }
}
