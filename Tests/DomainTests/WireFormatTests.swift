import Foundation
import HabitSyncDomain
import Testing

@Suite struct WireFormatTests {
    @Test(arguments: [
        ("2026-11-20T08:15:30.123Z", "2026-11-20T08:15:30.123Z"),
        ("2026-11-20T09:15:30.123+01:00", "2026-11-20T08:15:30.123Z"),
        ("2026-11-20T08:15:30Z", "2026-11-20T08:15:30.000Z"),
        ("2026-11-20 08:15:30.1234567Z", "2026-11-20T08:15:30.123Z"),
        ("2026-11-20T08:15:30.9999Z", "2026-11-20T08:15:31.000Z"),
        ("2024-02-29T23:59:59.999-05:00", "2024-03-01T04:59:59.999Z"),
        ("1999-12-31T23:59:59Z", "1999-12-31T23:59:59.000Z"),
    ])
    func timestampsNormaliseToUTCMilliseconds(_ input: String, _ output: String) throws {
        let date = try #require(WireTime.parse(input))
        #expect(WireTime.format(date) == output)
    }

    @Test(arguments: [
        "2026-02-29T00:00:00Z", "2026-11-31T00:00:00Z", "2026-11-20T24:00:00Z", "2026-11-20T08:15:30",
        "2026-11-20", "20261120T081530Z", "2026-11-20T08:15:30.Z", "2026-11-20T08:15:30+25:00", "yesterday", "",
    ])
    func impossibleOrOffsetlessTimestampsAreRefused(_ input: String) {
        #expect(WireTime.parse(input) == nil)
    }

    @Test func calendarDatesAreRealGregorianDays() {
        #expect(LocalDate("2024-02-29") != nil)
        #expect(LocalDate("2000-02-29") != nil)
        #expect(LocalDate("1900-02-29") == nil)
        #expect(LocalDate("2026-02-29") == nil)
        #expect(LocalDate("2026-04-31") == nil)
        #expect(LocalDate("2026-13-01") == nil)
        #expect(LocalDate("2026-1-01") == nil)
        #expect(LocalDate("2026-12-31")?.description == "2026-12-31")
        #expect(LocalDate("1970-01-02")?.dayNumber == 1)
        #expect(LocalDate("2026-11-20")! < LocalDate("2026-11-21")!)
    }

    @Test func lwwKeysCompareTimeThenDeviceBytes() {
        let t = Date(timeIntervalSince1970: 1_795_162_530)
        #expect(LWWKey(updatedAt: t, deviceID: "b") < LWWKey(updatedAt: t.addingTimeInterval(0.001), deviceID: "a"))
        #expect(LWWKey(updatedAt: t, deviceID: "a") < LWWKey(updatedAt: t, deviceID: "b"))
        // Bytes, not human collation: "Z" (0x5A) sorts before "a" (0x61), "é" after "z".
        #expect(LWWKey(updatedAt: t, deviceID: "Z") < LWWKey(updatedAt: t, deviceID: "a"))
        #expect(LWWKey(updatedAt: t, deviceID: "z") < LWWKey(updatedAt: t, deviceID: "é"))
        // Sub-millisecond differences are the same key, as stored.
        #expect(LWWKey(updatedAt: t, deviceID: "a") == LWWKey(updatedAt: t.addingTimeInterval(0.0002), deviceID: "a"))
    }

    @Test func weekdaysAreNumberedSundayFirst() {
        // Seed erratum 1 mapped 3 → wednesday, 4 → thursday, 6 → saturday.
        #expect(Weekday.allCases.map(\.number) == Array(1...7))
        #expect(Weekday.sunday.number == 1)
        #expect(Weekday.tuesday.number == 3)
        #expect(Weekday.wednesday.number == 4)
        #expect(Weekday.friday.number == 6)
        #expect(Weekday.saturday.number == 7)
    }
}
