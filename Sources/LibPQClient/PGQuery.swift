import Foundation

/// One SQL statement and its parameters. Every interpolated value becomes a `$n` placeholder
/// plus a bind, numbered automatically, so values can never change the statement's text:
///
///     let query: PGQuery = "SELECT name FROM habits WHERE id = \(id) AND name <> \(name)"
///
/// SQL that is generated (a column list, a table's name) is interpolated as a `PGFragment`,
/// which only string literals, integers and quoted identifiers can make; queries compose by
/// interpolating one into another (`WITH input AS (\(input)) …`), their binds renumbered.
/// SQL text from anywhere else needs the deliberately loud `PGQuery(unsafeSQL:)`, which takes
/// no binds.
public struct PGQuery: Sendable, ExpressibleByStringInterpolation, CustomStringConvertible {
    /// The text between placeholders: `pieces.count == binds.count + 1`, and bind `i` sits
    /// between `pieces[i]` and `pieces[i + 1]`.
    private(set) var pieces: [String]
    public private(set) var binds: [PGBind]

    /// Raw SQL text, without parameters. Never build it from input.
    public init(unsafeSQL sql: String) {
        pieces = [sql]
        binds = []
    }

    public init(stringLiteral value: String) {
        pieces = [value]
        binds = []
    }

    public init(stringInterpolation: StringInterpolation) {
        self = stringInterpolation.query
    }

    /// The same binds between other pieces of text (`PGRelationNames`).
    func replacingPieces(_ replacement: [String]) -> PGQuery {
        var query = self
        query.pieces = replacement
        return query
    }

    /// The statement text, with the placeholders numbered `$1`, `$2` … in order.
    public var sql: String {
        var text = pieces[0]
        for index in binds.indices {
            text += "$\(index + 1)"
            text += pieces[index + 1]
        }
        return text
    }

    /// The statement text only: parameters are never part of a description.
    public var description: String { sql }

    public mutating func append(_ fragment: PGFragment) {
        pieces[pieces.count - 1] += fragment.sql
    }

    /// Appends a value: one more placeholder.
    public mutating func append(bind: PGBind) {
        binds.append(bind)
        pieces.append("")
    }

    /// Appends another query, its binds after these.
    public mutating func append(_ other: PGQuery) {
        pieces[pieces.count - 1] += other.pieces[0]
        pieces.append(contentsOf: other.pieces.dropFirst())
        binds.append(contentsOf: other.binds)
    }

    public struct StringInterpolation: StringInterpolationProtocol {
        var query = PGQuery(stringLiteral: "")

        public init(literalCapacity: Int, interpolationCount: Int) {
            query.pieces.reserveCapacity(interpolationCount + 1)
            query.binds.reserveCapacity(interpolationCount)
        }

        public mutating func appendLiteral(_ literal: String) {
            query.pieces[query.pieces.count - 1] += literal
        }

        /// A value: becomes `$n`.
        public mutating func appendInterpolation(_ value: some PGEncodable) {
            query.append(bind: value.pgBind())
        }

        /// A NULL-able value: becomes `$n`.
        public mutating func appendInterpolation(_ value: (some PGEncodable)?) {
            query.append(bind: value.map { $0.pgBind() } ?? .null())
        }

        /// Generated SQL text made of literals only.
        public mutating func appendInterpolation(_ fragment: PGFragment) {
            query.append(fragment)
        }

        /// A whole query: its text and its binds, renumbered.
        public mutating func appendInterpolation(_ other: PGQuery) {
            query.append(other)
        }

        /// An identifier (table, column, role), double-quoted with embedded quotes doubled.
        public mutating func appendInterpolation(identifier: String) {
            query.append(PGFragment.identifier(identifier))
        }
    }

    /// A string literal for commands that take no parameters (`SET`): `'` doubled and, when
    /// there is a backslash, backslashes doubled in an `E'…'` literal, so it reads the same
    /// whatever `standard_conforming_strings` says (what libpq's `PQescapeLiteral` does).
    /// `text` must hold no NUL, which would end the command early: callers pass fixed settings
    /// or validated ids (`SubjectRules` refuses control characters).
    public static func quoteLiteral(_ text: String) -> String {
        let quoted = text.replacingOccurrences(of: "'", with: "''")
        guard text.contains("\\") else { return "'" + quoted + "'" }
        return "E'" + quoted.replacingOccurrences(of: "\\", with: "\\\\") + "'"
    }

    /// `"name"`, with `"` doubled: safe for any string as an identifier.
    public static func quoteIdentifier(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

extension Sequence where Element == PGQuery {
    /// The queries one after another, `separator` between them, binds renumbered.
    public func joined(separator: PGFragment) -> PGQuery {
        var result = PGQuery(stringLiteral: "")
        for (index, query) in enumerated() {
            if index > 0 { result.append(separator) }
            result.append(query)
        }
        return result
    }
}
