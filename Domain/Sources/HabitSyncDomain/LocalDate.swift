/// A calendar date (`yyyy-MM-dd`) in the user's time zone; only real Gregorian dates exist.
public struct LocalDate: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int

    public init?(year: Int, month: Int, day: Int) {
        guard (1...9999).contains(year), (1...12).contains(month), day >= 1, day <= Self.daysIn(month: month, year: year) else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// Any day of the proleptic Gregorian calendar, also outside years 1–9999: arithmetic on
    /// dates (a day before 0001-01-01, after 9999-12-31) must never trap. Inputs are bounded
    /// where they are parsed (`recordYears`, `queryYears`), not here.
    public init(dayNumber: Int) {
        let civil = Self.civilFromDays(dayNumber)
        year = civil.year
        month = civil.month
        day = civil.day
    }

    /// Years a date or timestamp inside a record may have.
    public static let recordYears: ClosedRange<Int> = 1970...9999
    /// Years a query parameter (`/v1/stats/habits?from=&to=`) may have.
    public static let queryYears: ClosedRange<Int> = 2000...2200

    /// Parses `yyyy-MM-dd` and requires the year to lie in `years`.
    public init?(_ text: String, years: ClosedRange<Int>) {
        guard let date = LocalDate(text), years.contains(date.year) else { return nil }
        self = date
    }

    /// Parses exactly `yyyy-MM-dd`.
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == 45, bytes[7] == 45 else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                guard bytes[index] >= 48, bytes[index] <= 57 else { return nil }
                value = value * 10 + Int(bytes[index] - 48)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10) else { return nil }
        self.init(year: year, month: month, day: day)
    }

    public var description: String { "\(WireTime.pad(year, 4))-\(WireTime.pad(month, 2))-\(WireTime.pad(day, 2))" }

    /// Days since 1970-01-01.
    public var dayNumber: Int { Self.daysFromCivil(year, month, day) }

    /// The first day of this date's month.
    public var firstOfMonth: LocalDate { LocalDate(dayNumber: dayNumber - (day - 1)) }

    /// The first day of the next month.
    public var firstOfNextMonth: LocalDate { LocalDate(dayNumber: dayNumber - (day - 1) + Self.daysIn(month: month, year: year)) }

    public static func < (lhs: LocalDate, rhs: LocalDate) -> Bool { lhs.dayNumber < rhs.dayNumber }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    // Howard Hinnant's civil-calendar algorithms (proleptic Gregorian).
    static func daysFromCivil(_ y: Int, _ m: Int, _ d: Int) -> Int {
        let y = m <= 2 ? y - 1 : y
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civilFromDays(_ z: Int) -> (year: Int, month: Int, day: Int) {
        let z = z + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (m <= 2 ? yoe + era * 400 + 1 : yoe + era * 400, m, d)
    }
}
