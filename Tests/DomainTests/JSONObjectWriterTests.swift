import Foundation
import HabitSyncDomain
import Testing

/// The one JSON writer of the server's responses: fields in the order written, everything
/// escaped that needs it, JSON text inserted as it is; what it writes parses back.
@Suite struct JSONObjectWriterTests {
    @Test func fieldsComeInTheOrderWrittenAndParseBack() throws {
        var inner = JSONObjectWriter()
        inner.add("code", "invalid_field")
        inner.add("message", "a \"quote\", a \\ and a \u{1}")
        var writer = JSONObjectWriter()
        writer.add("index", 3)
        writer.add("serverVersion", Int64.max)
        writer.add("clamped", true)
        writer.add("current", json: "{\"a\":1}")
        writer.add("error", json: inner.json)
        writer.add("changes", jsonArray: ["1", "{\"b\":[]}", "null"])
        writer.add("empty", jsonArray: [])
        writer.add("we\"ird\n", "name")
        #expect(
            writer.json
                == "{\"index\":3,\"serverVersion\":9223372036854775807,\"clamped\":true,\"current\":{\"a\":1},\"error\":{\"code\":\"invalid_field\",\"message\":\"a \\\"quote\\\", a \\\\ and a \\u0001\"},\"changes\":[1,{\"b\":[]},null],\"empty\":[],\"we\\\"ird\\n\":\"name\"}"
        )
        let parsed = try JSONParser.parse(Data(writer.json.utf8))
        guard case .object(let fields) = parsed else {
            Issue.record("not an object: \(parsed)")
            return
        }
        #expect(fields["error"] == .object(["code": .string("invalid_field"), "message": .string("a \"quote\", a \\ and a \u{1}")]))
        #expect(fields["we\"ird\n"] == .string("name"))
        #expect(JSONObjectWriter().json == "{}")
    }

    @Test func aValueWritesItsObjectsInNameOrder() {
        let value: JSONValue = .object(["b": .number(2), "a": .array([.null, .bool(false), "x"]), "c": .object([:])])
        #expect(value.jsonText == "{\"a\":[null,false,\"x\"],\"b\":2,\"c\":{}}")
    }
}
