import Foundation
import HabitSyncDomain
import Testing

/// The pure rules that hostile input meets first: text as PostgreSQL measures it, dates at the
/// edges of the calendar, and a parser that refuses to build huge trees.
@Suite struct HostileInputTests {
    @Test func textIsMeasuredAndTrimmedAsPostgreSQLDoes() {
        #expect(TextRules.length("e\u{301}") == 2)
        #expect(TextRules.length("🏃‍♀️") == 4)
        #expect(String(TextRules.trimmingSpaces("  a b  ")) == "a b")
        #expect(String(TextRules.trimmingSpaces("\u{00A0}a\u{3000}")) == "\u{00A0}a\u{3000}", "btrim removes spaces only")
        #expect(TextRules.trimmingSpaces("   ").isEmpty)
        #expect(TextRules.firstControlCharacter(in: "ab\u{0}")?.offset == 2)
        #expect(TextRules.firstControlCharacter(in: "a\u{85}")?.scalar == "\u{85}")
        #expect(TextRules.firstControlCharacter(in: "a\nb\tc", allowingParagraphs: true) == nil)
        #expect(TextRules.firstControlCharacter(in: "a\rb", allowingParagraphs: true) != nil)
        #expect(TextRules.firstControlCharacter(in: "a\u{2028}b🏃") == nil)
        #expect(TextRules.storable("a\u{0}b") == "a\u{FFFD}b")
    }

    @Test func aDeviceIDIsOneToAHundredPrintableScalars() {
        for good in ["a", "phone", String(repeating: "x", count: 100), "iPhone 15 ✓", "e\u{301}"] { #expect(DeviceID.isWellFormed(good), "\(good.debugDescription)") }
        for bad in ["", String(repeating: "x", count: 101), String(repeating: "e\u{301}", count: 51), "phone\n", "a\u{0}b", "tab\there", "a\u{85}"] {
            #expect(!DeviceID.isWellFormed(bad), "\(bad.debugDescription)")
        }
    }

    @Test func patternsMatchToTheTrueEnd() {
        #expect(TextRules.isColor("#FFFFFF") && TextRules.isColor("#ffffff00"))
        for bad in ["#FFFFFF\n", "#FFFFFF\u{2028}", "FFFFFF", "#FFFFF", "#FFFFFFF", "#GGGGGG", "#ＦＦＦＦＦＦ"] { #expect(!TextRules.isColor(bad), "\(bad.debugDescription)") }
        #expect(TextRules.isTimeOfDay("00:00") && TextRules.isTimeOfDay("23:59"))
        for bad in ["24:00", "12:60", "12:30\n", "1:30", "١٢:٣٠", "12-30"] { #expect(!TextRules.isTimeOfDay(bad), "\(bad.debugDescription)") }
        #expect(TextRules.isURLScheme("instagram://") && TextRules.isURLScheme("a+b.c-d://x/y?z"))
        for bad in ["a://x\n", "a://x y", "a://x\u{00A0}", "a://x\u{2028}", "1a://", "a:/x", "://", "ä://"] { #expect(!TextRules.isURLScheme(bad), "\(bad.debugDescription)") }
        #expect(TextRules.isTimeZoneName("America/Argentina/Buenos_Aires") && TextRules.isTimeZoneName("Etc/GMT+5"))
        for bad in ["", "Europe/Berlin\n", String(repeating: "a", count: 65), "Europe Berlin"] { #expect(!TextRules.isTimeZoneName(bad)) }
    }

    @Test func datesAreBoundedWhereTheyAreParsedAndArithmeticNeverTraps() {
        #expect(LocalDate("0001-01-01", years: LocalDate.queryYears) == nil)
        #expect(LocalDate("2200-12-31", years: LocalDate.queryYears) != nil)
        #expect(LocalDate("1969-12-31", years: LocalDate.recordYears) == nil)
        #expect(LocalDate("9999-12-31", years: LocalDate.recordYears) != nil)
        let first = LocalDate("0001-01-01")!, last = LocalDate("9999-12-31")!
        #expect(first.adding(days: -29).description.hasPrefix("0000-12"))
        #expect(last.adding(days: 1).description == "10000-01-01")
        #expect(LocalDate(dayNumber: last.dayNumber) == last)
        #expect(WireTime.parse("1969-12-31T23:59:59Z", years: LocalDate.recordYears) == nil)
        // The instant must fit too: this one is in year 10000 in UTC, as the server stores and
        // returns it (and then could not read it back).
        #expect(WireTime.parse("9999-12-31T23:59:59.999-23:59", years: LocalDate.recordYears) == nil)
        #expect(WireTime.parse("1970-01-01T00:00:00+00:01", years: LocalDate.recordYears) == nil)
        #expect(WireTime.parse("9999-12-31T23:59:59.999Z", years: LocalDate.recordYears).map(WireTime.format) == "9999-12-31T23:59:59.999Z")
        // Found by libFuzzer: ten or more fraction digits trapped (a push's updatedAt could
        // take the server down).
        #expect(WireTime.parse("2026-11-20T08:15:30.1234567890Z").map(WireTime.format) == "2026-11-20T08:15:30.123Z")
        #expect(WireTime.parse("2026-11-20T08:15:30.99999999999999999Z").map(WireTime.format) == "2026-11-20T08:15:31.000Z")
        #expect(WireTime.parse("2026-00-29T23:59:59.9999959290+0-29") == nil)
    }

    @Test func eventTimesAheadOfTheClockAreRefusedAndUpdatedAtIsClamped() throws {
        let now = Date(timeIntervalSince1970: 1_795_162_530)
        let context = ValidationContext.standalone(now: now, maximumSkew: 300)
        func event(_ offset: TimeInterval) -> [String: JSONValue] {
            ["eventType": .string("exit_to_focus"), "timestamp": .string(WireTime.format(now.addingTimeInterval(offset))), "pauseDuration": .number(1), "timerDuration": .number(30)]
        }
        #expect((try? UsageEventRecord(event(299), context: context)) != nil)
        do {
            _ = try UsageEventRecord(event(301), context: context)
            Issue.record("an event 301 s ahead was accepted")
        } catch {
            #expect(error.code == .timestampInFuture)
            #expect(error.field == "timestamp")
        }
    }

    @Test func theParserRefusesTreesBeyondItsLimits() {
        func refusal(_ text: String) -> String? {
            do {
                _ = try JSONParser.parse(Data(text.utf8))
                return nil
            } catch {
                return error.limit ?? "syntax"
            }
        }
        #expect(refusal("[" + Array(repeating: "0", count: 10_001).joined(separator: ",") + "]")?.contains("items") == true)
        #expect(refusal("[" + Array(repeating: "0", count: 10_000).joined(separator: ",") + "]") == nil)
        #expect(refusal(String(repeating: "[", count: 65) + String(repeating: "]", count: 65))?.contains("nesting") == true)
        #expect(refusal(String(repeating: "[", count: 1_000_000))?.contains("nesting") == true)
        let fields = (0..<1001).map { "\"k\($0)\":0" }.joined(separator: ",")
        #expect(refusal("{\(fields)}")?.contains("fields") == true)
        let many = "[" + Array(repeating: "[" + Array(repeating: "0", count: 9_000).joined(separator: ",") + "]", count: 30).joined(separator: ",") + "]"
        #expect(refusal(many)?.contains("values") == true)
        #expect(refusal("[1e308, -0, 9007199254740993, 5e-324]") == nil)
        #expect(refusal("[1e309]") == "syntax", "not finite")
    }
}
