import Foundation
import TestSupport
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
        // Unquoted, white space around an element is not part of it, and only `NULL` bare is null.
        #expect(PGArrayLiteral.decode("{ a , NULL ,\"NULL\", \" b \"}")! == ["a", nil, "NULL", " b "])
        #expect(PGArrayLiteral.decode("{\"a,b\"") == nil)
        #expect(PGArrayLiteral.decode("{a\\") == nil)
        #expect(PGArrayLiteral.decode("{") == nil)
        #expect(PGArrayLiteral.decode("[0:1]{a}") == nil)
    }

    /// What PostgreSQL prints for an array of awkward strings (`array_out`'s quoting, white
    /// space, `NULL` as an element and as a word) decodes to the elements bound: random arrays
    /// through a real server and back.
    @Test func arraysPostgreSQLPrintsDecodeToTheirElements() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        var generator = SystemRandomNumberGenerator()
        let pieces: [String] = ["a", ",", "\"", "\\", " ", "{", "}", "NULL", "null", "é", "日", "🧘‍♀️", "e\u{301}", "\t", "\n"]
        let arrays: [[String?]] = (0..<60).map { _ in
            (0..<Int.random(in: 0...6, using: &generator)).map { _ -> String? in
                guard Int.random(in: 0..<4, using: &generator) > 0 else { return nil }
                return (0..<Int.random(in: 0...5, using: &generator)).map { _ in pieces.randomElement(using: &generator) ?? "" }.joined()
            }
        }
        try await database.withPool { pool in
            try await pool.withConnection { connection in
                for values in arrays {
                    let printed = try await connection.query("SELECT \(PGArrayLiteral.encode(values))::text[]::text AS v").single()
                        .decode("v", as: String.self)
                    #expect(PGArrayLiteral.decode(printed) == values, "\(printed)")
                }
            }
        }
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

/// `PGUUIDText` writes what `uuidString.lowercased()` writes, and reads what `UUID(uuidString:)`
/// reads of the canonical form, and nothing else: Foundation also takes a hyphen for a digit
/// (`"-a3a2c9e-…"` reads as `F63A2C9E-…`), which this parser refuses.
@Suite struct PGUUIDTextTests {
    @Test func formattingIsFoundationsTextLowercased() {
        let zero = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        let ones = UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255))
        let fixed = [zero, ones]
        for uuid in fixed + (0..<2_000).map({ _ in UUID() }) {
            #expect(PGUUIDText.format(uuid) == uuid.uuidString.lowercased())
            #expect(PGUUIDText.bytes(uuid) == Array(uuid.uuidString.lowercased().utf8))
            #expect(PGUUIDText.parse(uuid.uuidString) == uuid)
            #expect(PGUUIDText.parse(PGUUIDText.format(uuid)) == uuid)
        }
    }

    /// 36 characters: hexadecimal digits in either case, hyphens after the 8th, 12th, 16th and 20th.
    static func isCanonical(_ text: String) -> Bool {
        Array(text.utf8).count == 36
            && text.utf8.enumerated().allSatisfy { index, byte in
                [8, 13, 18, 23].contains(index) ? byte == UInt8(ascii: "-") : Character(UnicodeScalar(byte)).isHexDigit && byte < 0x80
            }
    }

    @Test func parsingReadsTheCanonicalFormAndNothingElse() {
        let valid = "6a3a2c9e-0000-4000-8000-00000000abcd"
        var texts = [
            "", "6a3a2c9e", valid + "0", " " + valid, valid + "\n", "{" + valid + "}", valid.replacingOccurrences(of: "-", with: ""),
            "6A3A2C9E-0000-4000-8000-00000000ABCD", "6a3a2c9e00000-4000-8000-00000000abcd", "g" + valid.dropFirst(),
            "６a3a2c9e-0000-4000-8000-00000000abc",
        ]
        // Every single-byte change of a valid text, over a range of bytes.
        let bytes = Array(valid.utf8)
        for position in bytes.indices {
            for byte in [0, 0x2D, 0x2F, 0x30, 0x39, 0x3A, 0x40, 0x41, 0x46, 0x47, 0x60, 0x61, 0x66, 0x67, 0x7F] as [UInt8] {
                var changed = bytes
                changed[position] = byte
                texts.append(String(decoding: changed, as: UTF8.self))
            }
        }
        var canonical = 0
        for text in texts {
            if Self.isCanonical(text) {
                canonical += 1
                #expect(PGUUIDText.parse(text) != nil && PGUUIDText.parse(text) == UUID(uuidString: text), "\(text.debugDescription)")
            } else {
                #expect(PGUUIDText.parse(text) == nil, "\(text.debugDescription)")
            }
        }
        #expect(canonical > 100 && canonical < texts.count - 100, "both kinds tried")
    }
}
