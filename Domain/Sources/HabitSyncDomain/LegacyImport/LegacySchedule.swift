import Foundation

/// The old app's free-text schedule, read by the schedule grammar of docs/legacy-import.md.
public enum LegacySchedule {
    public enum Parsed: Sendable, Equatable {
        case schedule(HabitSchedule)
        /// `select days`, `not selected`, empty: take the goal's frequency instead.
        case unknown
    }

    static let weekdayNames: [(String, Weekday)] = [
        ("sunday", .sunday), ("monday", .monday), ("tuesday", .tuesday), ("wednesday", .wednesday), ("thursday", .thursday),
        ("friday", .friday), ("saturday", .saturday), ("sun", .sunday), ("mon", .monday), ("tue", .tuesday), ("wed", .wednesday),
        ("thu", .thursday), ("fri", .friday), ("sat", .saturday),
    ]

    /// Nil when the text matches no rule (an error for the importer).
    public static func parse(_ text: String) -> Parsed? {
        let s = text.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        if s.isEmpty || s == "select days" || s == "not selected" { return .unknown }
        if ["everyday", "every day", "daily"].contains(s) { return .schedule(.daily) }
        if let n = number(in: s, pattern: #"^every (\d+) days?$"#) { return n >= 1 ? .schedule(.everyNDays(n)) : nil }
        if s == "weekdays" { return .schedule(.specificWeekdays([.monday, .tuesday, .wednesday, .thursday, .friday])) }
        if s == "weekends" { return .schedule(.specificWeekdays([.saturday, .sunday])) }
        // Month patterns before weekday names: "month" contains "mon".
        if s == "once a month" { return .schedule(.frequencyMonthly(1)) }
        if s == "twice a month" { return .schedule(.frequencyMonthly(2)) }
        if let n = number(in: s, pattern: #"^(\d+) (days?|times?) (a|per) month$"#) { return (1...31).contains(n) ? .schedule(.frequencyMonthly(n)) : nil }
        if s == "once a week" { return .schedule(.frequencyWeekly(1)) }
        if s == "twice a week" { return .schedule(.frequencyWeekly(2)) }
        if let n = number(in: s, pattern: #"^(\d+) (days?|times?) (a|per) week$"#) {
            if n == 7 { return .schedule(.daily) }
            return (1...6).contains(n) ? .schedule(.frequencyWeekly(n)) : nil
        }
        // Weekday names, full or three letters, with or without "every", comma- or "and"-separated.
        let parts = s.replacingOccurrences(of: " and ", with: ",").split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "every ", with: "")
        }
        var days: [Weekday] = []
        for part in parts where !part.isEmpty {
            guard let day = weekdayNames.first(where: { $0.0 == part })?.1 else { return nil }
            if !days.contains(day) { days.append(day) }
        }
        return days.isEmpty ? nil : .schedule(.specificWeekdays(days))
    }

    static func number(in text: String, pattern: String) -> Int? {
        guard let regex = try? NSRegularExpression(pattern: pattern),
            let match = regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)),
            let range = Range(match.range(at: 1), in: text)
        else { return nil }
        return Int(text[range])
    }
}
