import Synchronization

/// Relations a transaction's statements name by other names: each bare (or `public.`) use of
/// a listed relation in a statement's text, quoted or not, is replaced by its listed name before
/// the statement is prepared, so the renamed statement is prepared and cached as a statement of
/// its own. String literals, comments and dollar quotes are left alone, and so is a name after
/// another qualifier (`x.habits` is a column) or after `::` (a type). A statement of a renamed
/// transaction must not use a listed name for anything else (a column alias `AS habits`).
///
/// A Citus worker runs a statement that names a shard's own table with the standard planner
/// and a cached plan; the same statement naming the distributed table goes through Citus'
/// planner and is planned again for local execution (BENCHMARKS.md, "Citus that pays").
public final class PGRelationNames: Sendable {
    /// Relation → the name used instead (plain identifiers, unquoted).
    public let names: [String: String]
    /// Renamed statement texts by their original pieces: a statement is scanned once.
    private let renamed = Mutex<[[String]: [String]]>([:])

    public init(_ names: [String: String]) {
        self.names = names
    }

    /// `query` with the listed relations renamed (its binds unchanged).
    public func apply(to query: PGQuery) -> PGQuery {
        if let known = renamed.withLock({ $0[query.pieces] }) { return query.replacingPieces(known) }
        let pieces = query.pieces.map(rename)
        renamed.withLock { $0[query.pieces] = pieces }
        return query.replacingPieces(pieces)
    }

    /// One piece of statement text (the text between two parameters) with the names replaced.
    func rename(_ text: String) -> String {
        let bytes = Array(text.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + 16)
        var index = 0
        /// The last significant byte written outside identifiers (for `x.name`).
        var previous: UInt8 = 0
        var previousWord: [UInt8] = []
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "'"):
                let end = Self.closingQuote(bytes, from: index, quote: byte)
                output += bytes[index..<end]
                index = end
                previous = byte
                previousWord = []
            case UInt8(ascii: "\""):
                // A quoted identifier is renamed like a bare one (generated SQL quotes names).
                let end = Self.closingQuote(bytes, from: index, quote: byte)
                let word = Array(bytes[(index + 1)..<max(index + 1, end - 1)])
                if let replacement = replacement(for: word, previous: previous, previousWord: previousWord) {
                    output += Array("\"\(replacement)\"".utf8)
                } else {
                    output += bytes[index..<end]
                }
                index = end
                previous = byte
                previousWord = word
            case UInt8(ascii: "-") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "-"):
                let end = bytes[index...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
                output += bytes[index..<end]
                index = end
            case UInt8(ascii: "/") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "*"):
                var end = index + 2
                while end + 1 < bytes.count && !(bytes[end] == UInt8(ascii: "*") && bytes[end + 1] == UInt8(ascii: "/")) { end += 1 }
                end = min(bytes.count, end + 2)
                output += bytes[index..<end]
                index = end
            case UInt8(ascii: "$"):
                let end = Self.dollarQuoteEnd(bytes, from: index)
                output += bytes[index..<end]
                index = end
                previous = byte
                previousWord = []
            case _ where Self.startsIdentifier(byte):
                var end = index + 1
                while end < bytes.count && Self.continuesIdentifier(bytes[end]) { end += 1 }
                let word = Array(bytes[index..<end])
                if let replacement = replacement(for: word, previous: previous, previousWord: previousWord) {
                    output += Array(replacement.utf8)
                } else {
                    output += word
                }
                previousWord = word
                previous = word.last ?? 0
                index = end
            default:
                output.append(byte)
                if byte == UInt8(ascii: ".") {
                    previousWord.append(byte)
                } else if byte != UInt8(ascii: " ") && byte != UInt8(ascii: "\n") {
                    previousWord = []
                }
                if byte != UInt8(ascii: " ") && byte != UInt8(ascii: "\n") { previous = byte }
                index += 1
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The name to write for `word`, if it names a listed relation where it stands: after
    /// another qualifier it is a column, after `::` a type (a row cast to the distributed
    /// table's type stays that type).
    private func replacement(for word: [UInt8], previous: UInt8, previousWord: [UInt8]) -> String? {
        if previous == UInt8(ascii: ".") && previousWord != Array("public.".utf8) { return nil }
        if previous == UInt8(ascii: ":") { return nil }
        return names[String(decoding: word, as: UTF8.self)]
    }

    private static func startsIdentifier(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || byte == UInt8(ascii: "_") || byte >= 0x80
    }

    private static func continuesIdentifier(_ byte: UInt8) -> Bool {
        startsIdentifier(byte) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "$")
    }

    /// The index after the literal or quoted identifier starting at `start` (a doubled quote
    /// stays inside it).
    private static func closingQuote(_ bytes: [UInt8], from start: Int, quote: UInt8) -> Int {
        var index = start + 1
        while index < bytes.count {
            if bytes[index] == quote {
                if index + 1 < bytes.count && bytes[index + 1] == quote {
                    index += 2
                    continue
                }
                return index + 1
            }
            index += 1
        }
        return bytes.count
    }

    /// The index after a dollar-quoted string starting at `start` (`$tag$ … $tag$`), or after
    /// the `$` alone when it starts none (a parameter's number follows it).
    private static func dollarQuoteEnd(_ bytes: [UInt8], from start: Int) -> Int {
        var tagEnd = start + 1
        while tagEnd < bytes.count && bytes[tagEnd] != UInt8(ascii: "$") {
            guard continuesIdentifier(bytes[tagEnd]), !(tagEnd == start + 1 && bytes[tagEnd] >= UInt8(ascii: "0") && bytes[tagEnd] <= UInt8(ascii: "9")) else {
                return start + 1
            }
            tagEnd += 1
        }
        guard tagEnd < bytes.count else { return start + 1 }
        let tag = Array(bytes[start...tagEnd])
        var index = tagEnd + 1
        while index + tag.count <= bytes.count {
            if bytes[index] == UInt8(ascii: "$") && Array(bytes[index..<(index + tag.count)]) == tag { return index + tag.count }
            index += 1
        }
        return bytes.count
    }
}
