import Foundation

/// The old app's free-text goal (`"5 times everyday"`, `"2 cups on every monday"`), read by
/// the goal grammar of docs/legacy-import.md.
public struct LegacyGoal: Sendable, Equatable {
    public let count: Int
    public let unit: String
    /// The frequency phrase the goal carried, if any (`everyday`, `every 2 days`, …).
    public let frequency: String?

    static let frequencyPhrase =
        #"(everyday|every day|daily|weekdays|weekends|once a week|twice a week|\d+ days? a week|once a month|twice a month|\d+ days? a month|\d+ times? (per|a) week|every \d+ days?|a day|((every )?(sunday|monday|tuesday|wednesday|thursday|friday|saturday|sun|mon|tue|wed|thu|fri|sat)(, *| and )?)+)$"#

    /// Nil when the text has no unit at all.
    public static func parse(_ text: String) -> LegacyGoal? {
        let lowered = text.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        guard !lowered.isEmpty else { return nil }
        var count = 1
        var rest = lowered
        if let match = lowered.range(of: #"^\d+\s+"#, options: .regularExpression) {
            count = Int(lowered[match].trimmingCharacters(in: .whitespaces)) ?? 1
            rest = String(lowered[match.upperBound...])
        } else if lowered.range(of: #"^\d+$"#, options: .regularExpression) != nil {
            return LegacyGoal(count: Int(lowered) ?? 1, unit: "times", frequency: nil)
        }
        var unit: String
        var frequency: String?
        if let on = rest.range(of: " on ") {
            unit = String(rest[..<on.lowerBound])
            frequency = String(rest[on.upperBound...])
        } else if let per = rest.range(of: " per ") {
            unit = String(rest[..<per.lowerBound])
            frequency = String(rest[per.upperBound...])
        } else if let phrase = rest.range(of: " " + frequencyPhrase, options: .regularExpression) {
            unit = String(rest[..<phrase.lowerBound])
            frequency = String(rest[phrase.lowerBound...]).trimmingCharacters(in: .whitespaces)
        } else {
            unit = rest
            frequency = nil
        }
        unit = unit.trimmingCharacters(in: .whitespaces)
        if unit == "time" || unit == "times" || unit.isEmpty { unit = "times" }
        return LegacyGoal(count: count, unit: unit, frequency: frequency?.trimmingCharacters(in: .whitespaces))
    }
}
