import Foundation
import HabitSyncDomain
import SeededRandom
import Testing

@Suite struct JSONParserTests {
    @Test(arguments: [
        #"{"a":1,"b":[true,false,null],"c":"x\"y\\z\/\u00e9\ud83e\udde0","d":-1.5e3,"e":{}, "f" : [ ] }"#,
        #"[0, -0, 1e2, 1E-2, 123.456, "tab\there", "ünïcödé 🧘"]"#, "\"just a string\"", "42", "true", "null", "  {\"nested\": [[[{\"x\": [1]}]]]}  ",
    ])
    func parsesWhatJSONDecoderParsesIdentically(_ text: String) throws {
        let reference = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        #expect(try JSONParser.parse(Data(text.utf8)) == reference)
    }

    @Test(arguments: [
        "", "{", "[1,]", "{\"a\":}", "{\"a\" 1}", "01", "1.", ".5", "+1", "tru", "nul", "\"unterminated", "\"bad \\x escape\"",
        "\"\\ud800 lone surrogate\"", "[1] [2]", "{\"a\":1,}", "\"control \u{01} char\"", "1e", "NaN", "Infinity",
    ])
    func rejectsMalformedJSON(_ text: String) {
        #expect(throws: JSONParser.SyntaxError.self) { try JSONParser.parse(Data(text.utf8)) }
    }

    @Test func refusesAbsurdNesting() {
        let deep = String(repeating: "[", count: 1000) + String(repeating: "]", count: 1000)
        #expect(throws: JSONParser.SyntaxError.self) { try JSONParser.parse(Data(deep.utf8)) }
    }

    @Test func agreesWithJSONDecoderOnRandomDocuments() throws {
        var random = SeededGenerator(seed: 7)
        func value(_ depth: Int) -> Any {
            switch Int.random(in: 0..<(depth > 3 ? 4 : 6), using: &random) {
            case 0: return Int.random(in: -1000...1000, using: &random)
            case 1: return Double(Int.random(in: -100_000...100_000, using: &random)) / 100
            case 2: return ["plain", "quote\"", "back\\slash", "newline\n", "é", "🧠", ""][Int.random(in: 0..<7, using: &random)]
            case 3: return Bool.random(using: &random)
            case 4: return (0..<Int.random(in: 0...4, using: &random)).map { _ in value(depth + 1) }
            default: return Dictionary(uniqueKeysWithValues: (0..<Int.random(in: 0...4, using: &random)).map { ("k\($0)", value(depth + 1)) })
            }
        }
        for _ in 0..<300 {
            let data = try JSONSerialization.data(withJSONObject: ["root": value(0)])
            #expect(try JSONParser.parse(data) == JSONDecoder().decode(JSONValue.self, from: data))
        }
    }
}
