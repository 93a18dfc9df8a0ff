import Foundation

/// A piece of SQL text the program wrote: only string literals, integers, other fragments and
/// quoted identifiers or string literals can make one, so no input can become SQL through it.
/// Generated statements (a collection's column list, its table) are built from fragments and
/// interpolated into a `PGQuery`.
public struct PGFragment: Sendable, Hashable, ExpressibleByStringInterpolation, CustomStringConvertible {
    public let sql: String

    private init(trusted sql: String) {
        self.sql = sql
    }

    public init(stringLiteral value: StaticString) {
        sql = value.description
    }

    public init(stringInterpolation: StringInterpolation) {
        sql = stringInterpolation.sql
    }

    public var description: String { sql }

    /// `"name"`, with `"` doubled: safe for any string as an identifier.
    public static func identifier(_ name: String) -> PGFragment {
        PGFragment(trusted: PGQuery.quoteIdentifier(name))
    }

    /// A string constant for any string: `PGQuery.quoteLiteral`, the one quoter.
    public static func literal(_ text: String) -> PGFragment {
        PGFragment(trusted: PGQuery.quoteLiteral(text))
    }

    public static func + (lhs: PGFragment, rhs: PGFragment) -> PGFragment {
        PGFragment(trusted: lhs.sql + rhs.sql)
    }

    public struct StringInterpolation: StringInterpolationProtocol {
        var sql = ""

        public init(literalCapacity: Int, interpolationCount: Int) {
            sql.reserveCapacity(literalCapacity + interpolationCount * 8)
        }

        public mutating func appendLiteral(_ literal: StaticString) {
            sql += literal.description
        }

        public mutating func appendInterpolation(_ fragment: PGFragment) {
            sql += fragment.sql
        }

        public mutating func appendInterpolation(_ number: Int) {
            sql += String(number)
        }
    }
}

extension Sequence where Element == PGFragment {
    public func joined(separator: PGFragment) -> PGFragment {
        var result: PGFragment = ""
        for (index, fragment) in enumerated() {
            result = index == 0 ? fragment : result + separator + fragment
        }
        return result
    }
}
