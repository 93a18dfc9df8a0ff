import ArgumentParser
import Foundation

/// Resolves one setting: the flag if given, else the environment variable, else the default.
/// A value that does not parse stops start-up with a message naming where it came from.
struct ConfigurationValue {
    static var environment: [String: String] { ProcessInfo.processInfo.environment }

    static func resolve<T>(
        flag: String?, flagName: String, environmentVariable: String, default defaultValue: T,
        rule: String, parse: (String) -> T?
    ) throws -> T {
        if let flag {
            guard let value = parse(flag) else { throw ValidationError("--\(flagName) '\(flag)': \(rule)") }
            return value
        }
        if let raw = environment[environmentVariable], !raw.isEmpty {
            guard let value = parse(raw) else { throw ValidationError("\(environmentVariable)='\(raw)': \(rule)") }
            return value
        }
        return defaultValue
    }

    /// A positive duration (`250ms`, `5s`, `2m`, `1h`, `90d`, or bare seconds) of at most
    /// 100 years; anything longer is refused rather than overflowing `Duration`.
    static func duration(_ text: String) -> Duration? {
        let units: [(suffix: String, milliseconds: Double)] = [("ms", 1), ("s", 1000), ("m", 60_000), ("h", 3_600_000), ("d", 86_400_000)]
        var number = Double(text)
        var factor = 1000.0
        if number == nil, let unit = units.first(where: { text.hasSuffix($0.suffix) }) {
            number = Double(text.dropLast(unit.suffix.count))
            factor = unit.milliseconds
        }
        guard let number, number.isFinite, number > 0 else { return nil }
        let milliseconds = number * factor
        guard milliseconds <= 100 * 365.25 * 86_400_000 else { return nil }
        return .milliseconds(milliseconds)
    }

    /// A duration as `duration` reads it, in the largest unit that divides it: `24h`, `5m`,
    /// `90s`, `250ms`.
    static func describe(_ duration: Duration) -> String {
        let milliseconds = Int64((duration / .milliseconds(1)).rounded())
        for (suffix, size) in [("h", Int64(3_600_000)), ("m", 60_000), ("s", 1000)] where milliseconds % size == 0 {
            return "\(milliseconds / size)\(suffix)"
        }
        return "\(milliseconds)ms"
    }
}
