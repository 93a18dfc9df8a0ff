import ArgumentParser
import Foundation

/// One command-line setting, declared once: its flag, environment variable, default, the rule a
/// value must meet, and what `--help` says about it, written from those, so the default `--help`
/// shows is the default used (`ServeSettings`; the README's table is checked against both).
struct ConfigurationSetting<Value: Sendable>: Sendable {
    /// The long flag, without `--`.
    let flag: String
    let environmentVariable: String
    /// What the setting does, one sentence or two; `--help` adds the variable and the default.
    let summary: String
    let valueName: String
    let defaultValue: Value
    /// How `--help` and the README show the default; nil when there is none to show.
    let defaultText: String?
    /// What a refused value is told, after where it came from.
    let rule: String
    let parse: @Sendable (String) -> Value?

    var name: NameSpecification { .customLong(flag) }

    var help: ArgumentHelp {
        ArgumentHelp("\(summary) Env: \(environmentVariable).\(defaultText.map { " Default: \($0)." } ?? "")", valueName: valueName)
    }

    /// The flag, variable and shown default, whatever the value's type (what the README shows).
    var row: ConfigurationSettingRow { ConfigurationSettingRow(flag: flag, environmentVariable: environmentVariable, defaultText: defaultText) }

    /// The flag if given, else the environment variable, else the default.
    func resolve(_ given: String?) throws -> Value {
        try ConfigurationValue.resolve(
            flag: given, flagName: flag, environmentVariable: environmentVariable, default: defaultValue, rule: rule, parse: parse)
    }
}

/// A setting as the README's configuration table shows it.
struct ConfigurationSettingRow: Sendable, Equatable {
    let flag: String
    let environmentVariable: String
    let defaultText: String?
}

extension ConfigurationSetting where Value == Duration {
    /// A positive duration (`250ms`, `5s`, `2m`, `1h`), from `minimum` to `maximum` when given.
    static func duration(
        _ flag: String, _ environmentVariable: String, _ summary: String, default defaultValue: Duration,
        from minimum: Duration? = nil, to maximum: Duration? = nil
    ) -> Self {
        let shown = ConfigurationValue.describe(defaultValue)
        let rule =
            if let minimum, let maximum {
                "must be a duration from \(ConfigurationValue.describe(minimum)) to \(ConfigurationValue.describe(maximum))"
            } else {
                "must be a positive duration such as \(shown)"
            }
        return Self(
            flag: flag, environmentVariable: environmentVariable, summary: summary, valueName: "duration", defaultValue: defaultValue,
            defaultText: shown, rule: rule,
            parse: { text in
                ConfigurationValue.duration(text).flatMap { value in
                    value >= (minimum ?? .zero) && value <= (maximum ?? value) ? value : nil
                }
            })
    }
}

extension ConfigurationSetting where Value == Int {
    /// A whole number in `range`.
    static func count(
        _ flag: String, _ environmentVariable: String, _ summary: String, default defaultValue: Int, in range: ClosedRange<Int>,
        valueName: String = "n"
    ) -> Self {
        Self(
            flag: flag, environmentVariable: environmentVariable, summary: summary, valueName: valueName, defaultValue: defaultValue,
            defaultText: "\(defaultValue)", rule: "must be a whole number from \(range.lowerBound) to \(range.upperBound)",
            parse: { Int($0).flatMap { range.contains($0) ? $0 : nil } })
    }

    /// A number of bytes in `range`, shown with its size in MiB.
    static func bytes(_ flag: String, _ environmentVariable: String, _ summary: String, default defaultValue: Int, in range: ClosedRange<Int>) -> Self {
        Self(
            flag: flag, environmentVariable: environmentVariable, summary: summary, valueName: "bytes", defaultValue: defaultValue,
            defaultText: "\(defaultValue) (\(defaultValue / (1024 * 1024)) MiB)",
            rule: "must be a whole number of bytes from \(range.lowerBound) to \(range.upperBound)",
            parse: { Int($0).flatMap { range.contains($0) ? $0 : nil } })
    }
}

extension ConfigurationSetting {
    /// One of a few words, each standing for a value; the default is named by its word.
    static func choice(
        _ flag: String, _ environmentVariable: String, _ summary: String, _ choices: KeyValuePairs<String, Value>, default word: String,
        valueName: String? = nil
    ) -> Self {
        let words = choices.map(\.key)
        let values = Dictionary(uniqueKeysWithValues: choices.map { ($0.key, $0.value) })
        let listed = words.count == 2 ? "\(words[0]) or \(words[1])" : words.dropLast().joined(separator: ", ") + " or " + (words.last ?? "")
        // A word the declaration does not list is a programming error caught by the suite
        // (`ConfigurationSettingTests`); the first choice stands in so start-up cannot trap.
        let defaultValue = values[word] ?? choices[choices.startIndex].value
        return Self(
            flag: flag, environmentVariable: environmentVariable, summary: summary, valueName: valueName ?? words.joined(separator: "|"),
            defaultValue: defaultValue, defaultText: word, rule: "must be \(listed)", parse: { values[$0] })
    }
}
