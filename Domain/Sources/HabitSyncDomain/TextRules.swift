/// How text from a device is measured and checked, written to agree exactly with how
/// PostgreSQL sees the same text (a UTF-8 database):
///
/// - **Length** is `char_length`: Unicode scalars, not grapheme clusters (`"e\u{301}"` is 2).
/// - **Blank** is what `btrim(x)` leaves empty: it removes spaces (U+0020) only, so that is
///   all `trimmingSpaces` removes.
/// - **Control characters** (general category Cc: U+0000–U+001F, U+007F–U+009F) are refused
///   in every field, so nothing invisible reaches the database or a log, and no pattern can be
///   fooled by a trailing newline. PostgreSQL's text cannot hold U+0000 at all. Free-text fields
///   that are shown as paragraphs (descriptions, notes) may hold line feeds and tabs.
public enum TextRules {
    public static func length(_ text: some StringProtocol) -> Int { text.unicodeScalars.count }

    /// `text` without leading and trailing U+0020, as `btrim(text)` returns it.
    public static func trimmingSpaces(_ text: String) -> Substring.UnicodeScalarView {
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: { $0 != " " }) else { return Substring.UnicodeScalarView() }
        let last = scalars.lastIndex(where: { $0 != " " }) ?? first
        return Substring(text).unicodeScalars[first...last]
    }

    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// The first control character and its position (in scalars), if any. `allowingParagraphs`
    /// lets line feed (U+000A) and tab (U+0009) through.
    public static func firstControlCharacter(in text: String, allowingParagraphs: Bool = false) -> (scalar: Unicode.Scalar, offset: Int)? {
        for (offset, scalar) in text.unicodeScalars.enumerated() where isControl(scalar) {
            if allowingParagraphs, scalar == "\n" || scalar == "\t" { continue }
            return (scalar, offset)
        }
        return nil
    }

    /// How a scalar is named in an error message: `U+000A`.
    public static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    /// The text with U+0000 replaced by U+FFFD: for what is logged about a refused change
    /// (the conflict log), which must be storable even when the change was not.
    public static func storable(_ text: String) -> String {
        guard text.unicodeScalars.contains("\u{0}") else { return text }
        return String(String.UnicodeScalarView(text.unicodeScalars.map { $0 == "\u{0}" ? "\u{FFFD}" : $0 }))
    }

    /// Whether every scalar is an ASCII letter, digit or one of `extra`.
    static func isASCII(_ scalar: Unicode.Scalar, letters: Bool = true, digits: Bool = true, extra: String = "") -> Bool {
        switch scalar.value {
        case 0x41...0x5A, 0x61...0x7A: letters
        case 0x30...0x39: digits
        default: extra.unicodeScalars.contains(scalar)
        }
    }

    static func isHexDigit(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x30...0x39, 0x41...0x46, 0x61...0x66: true
        default: false
        }
    }

    /// `#RRGGBB` or `#RRGGBBAA`, matched to the true end (as PostgreSQL's `~ '…$'` does; ICU's
    /// `$` would also match before a final newline).
    public static func isColor(_ text: String) -> Bool {
        let scalars = Array(text.unicodeScalars)
        guard scalars.count == 7 || scalars.count == 9, scalars[0] == "#" else { return false }
        return scalars.dropFirst().allSatisfy(isHexDigit)
    }

    /// `HH:mm`, 00:00–23:59.
    public static func isTimeOfDay(_ text: String) -> Bool {
        let s = Array(text.unicodeScalars)
        guard s.count == 5, s[2] == ":", s.enumerated().allSatisfy({ $0.offset == 2 || isASCII($0.element, letters: false) }) else { return false }
        let hour = Int(s[0].value - 48) * 10 + Int(s[1].value - 48)
        let minute = Int(s[3].value - 48) * 10 + Int(s[4].value - 48)
        return hour < 24 && minute < 60
    }

    /// `scheme://rest`: the scheme an ASCII letter then letters, digits, `+`, `.` or `-`; the
    /// rest without any whitespace (Unicode White_Space, a superset of what PostgreSQL's
    /// `[:space:]` matches in any locale) or control character.
    public static func isURLScheme(_ text: String) -> Bool {
        let scalars = Array(text.unicodeScalars)
        guard let first = scalars.first, isASCII(first, digits: false) else { return false }
        var index = 1
        while index < scalars.count, isASCII(scalars[index], extra: "+.-") { index += 1 }
        guard index + 3 <= scalars.count, scalars[index] == ":", scalars[index + 1] == "/", scalars[index + 2] == "/" else { return false }
        return scalars[(index + 3)...].allSatisfy { !$0.properties.isWhitespace && !isControl($0) }
    }

    /// The characters the schema allows in a time zone name (`^[A-Za-z0-9_+/-]{1,64}$`).
    public static func isTimeZoneName(_ text: String) -> Bool {
        let scalars = text.unicodeScalars
        return (1...64).contains(scalars.count) && scalars.allSatisfy { isASCII($0, extra: "_+/-") }
    }
}

extension TextRules {
    /// A value quoted in an error message: at most 40 characters, storable.
    public static func quoted(_ text: String) -> String {
        let scalars = text.unicodeScalars
        let head = String(String.UnicodeScalarView(scalars.prefix(40)))
        return storable(scalars.count > 40 ? head + "…" : head)
    }
}

extension JSONValue {
    /// The value with U+0000 replaced in every string and key (`TextRules.storable`), so that
    /// what a device sent can be logged as jsonb even when it could not be stored.
    public var storable: JSONValue {
        switch self {
        case .null, .bool, .number: self
        case .string(let text): .string(TextRules.storable(text))
        case .array(let items): .array(items.map(\.storable))
        case .object(let fields):
            .object(Dictionary(fields.map { (TextRules.storable($0.key), $0.value.storable) }, uniquingKeysWith: { first, _ in first }))
        }
    }
}
