import Foundation
import HabitSyncDomain
import Testing

/// The server's JSON strings: every control character escaped (as `\u00XX` where JSON has no
/// shorter form), and every string read back as itself, by our parser and by Foundation's.
@Suite struct JSONTextTests {
    @Test func everyControlCharacterIsEscapedAndReadsBack() throws {
        var scalars = (0..<0x80).compactMap(Unicode.Scalar.init)
        scalars += ["\u{7F}", "\u{85}", "\u{2028}", "\u{301}", "\u{FFFF}", "\u{1F600}"].flatMap(\.unicodeScalars)
        for scalar in scalars {
            let text = "a" + String(scalar) + "b"
            let json = JSONText.string(text)
            #expect(!json.unicodeScalars.contains { $0.value < 0x20 }, "\(scalar.value)")
            #expect(try JSONParser.parse(Data(json.utf8)) == .string(text), "\(scalar.value)")
            let foundation = try JSONSerialization.jsonObject(with: Data(json.utf8), options: .fragmentsAllowed) as? String
            #expect(foundation == text, "\(scalar.value)")
        }
        #expect(JSONText.string("\u{1F}") == "\"\\u001f\"")
        #expect(JSONText.string("\u{0}") == "\"\\u0000\"")
        #expect(JSONText.string("\u{B}") == "\"\\u000b\"")
    }
}
