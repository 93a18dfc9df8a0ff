/// What one fault scenario checked, whether each check held, and the counts behind them.
public struct FaultReport: Sendable {
    public struct Check: Sendable, CustomStringConvertible {
        public let claim: String
        public let passed: Bool
        public var description: String { "\(passed ? "ok  " : "FAIL") \(claim)" }
    }

    public let scenario: String
    public private(set) var checks: [Check] = []
    public private(set) var counts: [(name: String, value: Int)] = []
    public private(set) var notes: [String] = []

    public init(scenario: String) { self.scenario = scenario }

    public var passed: Bool { !checks.isEmpty && checks.allSatisfy(\.passed) }

    mutating func check(_ condition: Bool, _ claim: String) {
        checks.append(Check(claim: claim, passed: condition))
    }

    mutating func count(_ name: String, _ value: Int) {
        counts.append((name, value))
    }

    mutating func note(_ text: String) {
        notes.append(text)
    }

    /// The report as the command prints it.
    public var text: String {
        var lines = ["== \(scenario): \(passed ? "passed" : "FAILED")"]
        lines += checks.map { "  \($0)" }
        if !counts.isEmpty {
            lines.append("  counts: " + counts.map { "\($0.name) \($0.value)" }.joined(separator: ", "))
        }
        lines += notes.map { "  note: \($0)" }
        return lines.joined(separator: "\n")
    }
}
