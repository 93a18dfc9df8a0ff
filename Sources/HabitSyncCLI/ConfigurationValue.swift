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

    static func port(_ text: String) -> Int? {
        guard let value = Int(text), (0...65535).contains(value) else { return nil }
        return value
    }

    static func positiveInt(_ text: String) -> Int? {
        guard let value = Int(text), value > 0 else { return nil }
        return value
    }

    /// `5s`, `250ms`, `2m`, or a bare number of seconds.
    static func duration(_ text: String) -> Duration? {
        let units: [(String, (Double) -> Duration)] = [
            ("ms", { .milliseconds($0) }), ("s", { .milliseconds($0 * 1000) }), ("m", { .milliseconds($0 * 60_000) }),
            ("h", { .milliseconds($0 * 3_600_000) }), ("d", { .milliseconds($0 * 86_400_000) }),
        ]
        for (suffix, make) in units where text.hasSuffix(suffix) {
            guard let number = Double(text.dropLast(suffix.count)), number > 0, number.isFinite else { return nil }
            return make(number)
        }
        guard let seconds = Double(text), seconds > 0, seconds.isFinite else { return nil }
        return .milliseconds(seconds * 1000)
    }
}
