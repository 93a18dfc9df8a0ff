import Foundation

/// `timestamptz` text in and out, with microsecond precision and no `DateFormatter`
/// (which is slow and rounds to milliseconds). Connections run with `TimeZone=UTC` and
/// `DateStyle=ISO`, so the server prints `2026-11-20 08:15:30.123456+00`.
enum PGTimestamp {
    static func format(_ date: Date) -> String {
        let totalMicros = (date.timeIntervalSince1970 * 1_000_000).rounded()
        var micros = Int64(totalMicros)
        var seconds = micros / 1_000_000
        micros %= 1_000_000
        if micros < 0 {
            micros += 1_000_000
            seconds -= 1
        }
        var days = seconds / 86_400
        var secondOfDay = seconds % 86_400
        if secondOfDay < 0 {
            secondOfDay += 86_400
            days -= 1
        }
        let (year, month, day) = civilFromDays(days)
        let hour = secondOfDay / 3600, minute = (secondOfDay % 3600) / 60, second = secondOfDay % 60
        return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + " " + pad(hour, 2) + ":"
            + pad(minute, 2) + ":" + pad(second, 2) + "." + pad(micros, 6) + "+00"
    }

    /// Parses `YYYY-MM-DD HH:MM:SS[.ffffff][+HH[:MM[:SS]]]` (a `T` separator is accepted too).
    static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        var index = 0
        func number(_ digits: Int) -> Int64? {
            guard index + digits <= bytes.count else { return nil }
            var value: Int64 = 0
            for _ in 0..<digits {
                let byte = bytes[index]
                guard byte >= 48 && byte <= 57 else { return nil }
                value = value * 10 + Int64(byte - 48)
                index += 1
            }
            return value
        }
        func expect(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect(45), let month = number(2), expect(45),
            let day = number(2)
        else { return nil }
        guard index < bytes.count, bytes[index] == 32 || bytes[index] == 84 else { return nil }
        index += 1
        guard let hour = number(2), expect(58), let minute = number(2), expect(58),
            let second = number(2)
        else { return nil }
        var micros: Int64 = 0
        if expect(46) {
            var digits = 0
            while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
                if digits < 6 { micros = micros * 10 + Int64(bytes[index] - 48) }
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<max(digits, 6) { micros *= 10 }
        }
        var offsetSeconds: Int64 = 0
        if index < bytes.count {
            if bytes[index] == 90 {  // Z
                index += 1
            } else {
                let sign: Int64 = bytes[index] == 45 ? -1 : 1
                guard bytes[index] == 43 || bytes[index] == 45 else { return nil }
                index += 1
                guard let offsetHours = number(2) else { return nil }
                var offsetMinutes: Int64 = 0, offsetSecs: Int64 = 0
                if expect(58) { guard let m = number(2) else { return nil }; offsetMinutes = m }
                if expect(58) { guard let s = number(2) else { return nil }; offsetSecs = s }
                offsetSeconds = sign * (offsetHours * 3600 + offsetMinutes * 60 + offsetSecs)
            }
        }
        guard index == bytes.count, (1...12).contains(month), (1...31).contains(day), hour < 24,
            minute < 60, second < 61
        else { return nil }
        let days = daysFromCivil(year, month, day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        return Date(timeIntervalSince1970: Double(seconds) + Double(micros) / 1_000_000)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }

    // Howard Hinnant's civil-calendar algorithms (proleptic Gregorian).
    static func daysFromCivil(_ y: Int64, _ m: Int64, _ d: Int64) -> Int64 {
        let y = m <= 2 ? y - 1 : y
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civilFromDays(_ z: Int64) -> (Int64, Int64, Int64) {
        let z = z + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (m <= 2 ? y + 1 : y, m, d)
    }
}
