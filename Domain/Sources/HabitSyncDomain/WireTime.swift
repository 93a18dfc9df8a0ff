import Foundation

/// Timestamps on the wire: RFC 3339 with an offset (`2026-11-20T08:15:30.123Z`), kept to the
/// millisecond like the database (`timestamptz(3)`), so what a device sent and what it pulls
/// back compare equal.
public enum WireTime {
    /// Parses RFC 3339 (`T` or space, fraction optional, `Z` or ±HH:MM). Nil when invalid,
    /// including impossible dates such as February 30th.
    public static func parse(_ text: String, years: ClosedRange<Int> = 1...9999) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.count <= 40 else { return nil }
        var index = 0
        func digits(_ count: Int) -> Int? {
            guard index + count <= bytes.count else { return nil }
            var value = 0
            for _ in 0..<count {
                let byte = bytes[index]
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
                index += 1
            }
            return value
        }
        func expect(_ characters: String) -> Bool {
            guard index < bytes.count, characters.utf8.contains(bytes[index]) else { return false }
            index += 1
            return true
        }
        guard let year = digits(4), expect("-"), let month = digits(2), expect("-"), let day = digits(2),
            expect("Tt "), let hour = digits(2), expect(":"), let minute = digits(2), expect(":"), let second = digits(2)
        else { return nil }
        var nanos = 0
        if index < bytes.count, bytes[index] == 46 {
            index += 1
            var count = 0
            while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
                if count < 9 { nanos = nanos * 10 + Int(bytes[index] - 48) }
                count += 1
                index += 1
            }
            guard count > 0 else { return nil }
            // Digits past the ninth were dropped above; fewer than nine are scaled up. (The range
            // `count..<9` itself traps when count > 9: libFuzzer found that.)
            for _ in 0..<max(0, 9 - count) { nanos *= 10 }
        }
        var offset = 0
        if expect("Zz") {
        } else {
            guard index < bytes.count, bytes[index] == 43 || bytes[index] == 45 else { return nil }
            let sign = bytes[index] == 45 ? -1 : 1
            index += 1
            guard let offsetHours = digits(2), expect(":"), let offsetMinutes = digits(2), offsetHours < 24, offsetMinutes < 60 else { return nil }
            offset = sign * (offsetHours * 3600 + offsetMinutes * 60)
        }
        guard index == bytes.count, hour < 24, minute < 60, second < 60,
            LocalDate(year: year, month: month, day: day) != nil, years.contains(year)
        else { return nil }
        let days = LocalDate.daysFromCivil(year, month, day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset
        // The instant's own year must fit too: the server stores and returns it in UTC
        // (9999-12-31T23:59:59-23:59 is in year 10000 there), and what it returns must parse.
        let utcDays = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        guard years.contains(LocalDate.civilFromDays(utcDays).year) else { return nil }
        // Round to the millisecond, as timestamptz(3) does.
        let millis = Int((Double(nanos) / 1_000_000).rounded())
        return Date(timeIntervalSince1970: Double(seconds) + Double(millis) / 1000)
    }

    /// `2026-11-20T08:15:30.123Z`.
    public static func format(_ date: Date) -> String {
        let totalMillis = Int64((date.timeIntervalSince1970 * 1000).rounded())
        var days = totalMillis / 86_400_000
        var rest = totalMillis % 86_400_000
        if rest < 0 {
            rest += 86_400_000
            days -= 1
        }
        let civil = LocalDate.civilFromDays(Int(days))
        let hours = rest / 3_600_000, minutes = rest / 60_000 % 60, seconds = rest / 1000 % 60, millis = rest % 1000
        return "\(pad(civil.year, 4))-\(pad(civil.month, 2))-\(pad(civil.day, 2))T\(pad(Int(hours), 2)):\(pad(Int(minutes), 2)):\(pad(Int(seconds), 2)).\(pad(Int(millis), 3))Z"
    }

    /// Milliseconds since 1970: what the LWW comparison and equality use.
    public static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

    static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }
}
