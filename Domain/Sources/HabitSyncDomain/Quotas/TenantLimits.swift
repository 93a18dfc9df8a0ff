/// What one tenant's devices may use of the server (docs/operations.md, "Tenant quotas"); nil:
/// no limit of that kind. The ranges are the database's (migration 0042): a value outside one
/// is refused before anything is stored.
public struct TenantLimits: Sendable, Equatable {
    /// One kind of limit: its name in the API and the CLI, and the values it may take.
    public enum Kind: String, Sendable, CaseIterable {
        case pushesPerSecond, recordsPerSecond, recordsPerDay, streams, storageRows

        /// The CLI flag that sets it (`--pushes-per-second`).
        public var flag: String {
            rawValue.reduce(into: "") { flag, character in
                if character.isUppercase { flag += "-" }
                flag += character.lowercased()
            }
        }

        public var range: ClosedRange<Int64> {
            switch self {
            case .pushesPerSecond: 1...1_000_000
            case .recordsPerSecond: 1...100_000_000
            case .recordsPerDay, .storageRows: 1...1_000_000_000_000
            case .streams: 1...10_000_000
            }
        }
    }

    public var values: [Kind: Int64]

    public init(_ values: [Kind: Int64] = [:]) { self.values = values }

    public subscript(kind: Kind) -> Int64? {
        get { values[kind] }
        set { values[kind] = newValue }
    }

    public var isEmpty: Bool { values.isEmpty }

    /// A value given for `kind` as text: a whole number in its range, or `none` (no limit).
    /// Nil (not a value) for anything else: signs, decimals, exponents, spaces, words.
    public static func parse(_ text: String, for kind: Kind) -> Int64?? {
        if text == "none" { return .some(nil) }
        guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let value = Int64(text), kind.range.contains(value) else { return nil }
        return .some(value)
    }
}
