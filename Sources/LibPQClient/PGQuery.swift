import Foundation

/// One SQL statement and its parameters. Every interpolated value becomes a `$n` placeholder
/// plus a bind, so values can never change the statement's text:
///
///     let query: PGQuery = "SELECT name FROM habits WHERE id = \(id) AND name <> \(name)"
///
/// SQL text that is not a literal needs the deliberately loud `PGQuery(unsafeSQL:)`.
public struct PGQuery: Sendable, ExpressibleByStringInterpolation, CustomStringConvertible {
    public private(set) var sql: String
    public private(set) var binds: [PGBind]

    /// Raw SQL text. Never build it from input: use interpolation for values.
    public init(unsafeSQL sql: String, binds: [PGBind] = []) {
        self.sql = sql
        self.binds = binds
    }

    public init(stringLiteral value: String) {
        self.sql = value
        self.binds = []
    }

    public init(stringInterpolation: StringInterpolation) {
        self.sql = stringInterpolation.sql
        self.binds = stringInterpolation.binds
    }

    /// The statement text only: parameters are never part of a description.
    public var description: String { sql }

    public struct StringInterpolation: StringInterpolationProtocol {
        var sql: String
        var binds: [PGBind]

        public init(literalCapacity: Int, interpolationCount: Int) {
            sql = ""
            sql.reserveCapacity(literalCapacity + interpolationCount * 3)
            binds = []
            binds.reserveCapacity(interpolationCount)
        }

        public mutating func appendLiteral(_ literal: String) {
            sql += literal
        }

        /// A value: becomes `$n`.
        public mutating func appendInterpolation(_ value: some PGEncodable) {
            binds.append(value.pgBind())
            sql += "$\(binds.count)"
        }

        /// A NULL-able value: becomes `$n`.
        public mutating func appendInterpolation(_ value: (some PGEncodable)?) {
            binds.append(value.map { $0.pgBind() } ?? .null())
            sql += "$\(binds.count)"
        }

        /// An identifier (table, column, role), double-quoted with embedded quotes doubled.
        public mutating func appendInterpolation(identifier: String) {
            sql += PGQuery.quoteIdentifier(identifier)
        }
    }

    /// `"name"`, with `"` doubled: safe for any string as an identifier.
    public static func quoteIdentifier(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
