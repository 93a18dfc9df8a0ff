import Foundation
import Testing

@testable import LibPQClient

@Suite struct PGTimestampAndArrayLiteralTests {
    @Test(arguments: [
        ("2026-11-20 08:15:30.123456+00", 1_795_162_530.123456),
        ("2026-11-20 08:15:30+00", 1_795_162_530.0),
        ("2026-11-20T09:15:30.5+01", 1_795_162_530.5),
        ("2026-11-20 02:45:30-05:30", 1_795_162_530.0),
        ("1970-01-01 00:00:00+00", 0.0),
        ("1969-12-31 23:59:59.999999+00", -0.000001),
        ("2024-02-29 12:00:00Z", 1_709_208_000.0),
    ])
    func timestampsParse(_ text: String, _ seconds: Double) throws {
        let date = try #require(PGTimestamp.parse(text))
        #expect(abs(date.timeIntervalSince1970 - seconds) < 0.000_000_5)
    }

    @Test(arguments: ["", "2026-13-01 00:00:00+00", "2026-11-20", "2026-11-20 25:00:00+00", "2026-11-20 08:15:30.+00", "infinity"])
    func malformedTimestampsAreRejected(_ text: String) {
        #expect(PGTimestamp.parse(text) == nil)
    }

    @Test func formattingRoundTripsThroughParsing() {
        for seconds in [0.0, 1.5, -1.5, 1_795_162_530.123456, 951_782_400.0, 4_102_444_799.999999, -62_135_596_800.0] {
            let formatted = PGTimestamp.format(Date(timeIntervalSince1970: seconds))
            let parsed = PGTimestamp.parse(formatted)
            #expect(parsed.map { abs($0.timeIntervalSince1970 - seconds) < 0.000_001 } == true, "\(seconds) → \(formatted)")
        }
        #expect(PGTimestamp.format(Date(timeIntervalSince1970: 951_782_400)) == "2000-02-29 00:00:00.000000+00")
    }

    @Test func arrayLiteralsRoundTrip() {
        let values: [String?] = ["a", nil, "NULL", "", "x,y", "q\"q", "b\\s", "{}", " sp ", "ünï\"日本\\🧘‍♀️", "e\u{301}"]
        let literal = PGArrayLiteral.encode(values)
        #expect(PGArrayLiteral.decode(literal)! == values)
        // Exactly PostgreSQL's quoting: `"` and `\` escaped, every other byte (multi-byte UTF-8 too) as is.
        #expect(PGArrayLiteral.encode(["é\"", nil, "日\\"]) == "{\"é\\\"\",NULL,\"日\\\\\"}")
        #expect(PGArrayLiteral.encode([]) == "{}")
        #expect(PGArrayLiteral.decode("{1,2,NULL}")! == ["1", "2", nil])
        #expect(PGArrayLiteral.decode("[0:1]={a,b}")! == ["a", "b"])
        #expect(PGArrayLiteral.decode("{}")! == [])
        #expect(PGArrayLiteral.decode("{{1,2},{3,4}}") == nil)
        #expect(PGArrayLiteral.decode("not an array") == nil)
    }

    @Test func interpolationBindsValuesAndQuotesIdentifiers() {
        let name = "Robert'); DROP TABLE students;--"
        let query: PGQuery = "SELECT * FROM \(identifier: "we\"ird") WHERE name = \(name) AND n > \(3)"
        #expect(query.sql == #"SELECT * FROM "we""ird" WHERE name = $1 AND n > $2"#)
        #expect(query.binds.count == 2)
        #expect(query.description == query.sql)
        #expect(!query.description.contains("Robert"))
    }
}
