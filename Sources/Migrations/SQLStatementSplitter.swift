/// Splits a migration file into its statements, so that each runs on its own (a failure then
/// names the statement, and `CREATE INDEX CONCURRENTLY` is not wrapped in an implicit
/// transaction). Understands comments, quoted identifiers, standard and `E''` strings, and
/// dollar quoting, so a `;` inside a function body does not split it.
public enum SQLStatementSplitter {
    public struct Statement: Sendable, Equatable {
        /// The statement without its trailing `;`.
        public let sql: String
        /// 1-based line where the statement starts (its first non-blank, non-comment text).
        public let line: Int
    }

    public static func split(_ text: String) -> [Statement] {
        let chars = Array(text.unicodeScalars)
        var statements: [Statement] = []
        var start = 0  // first meaningful character of the current statement
        var index = 0
        var line = 1
        var startLine: Int? = nil  // line of the first meaningful character of the current statement

        func isIdentifierChar(_ c: Unicode.Scalar) -> Bool {
            c.properties.isAlphabetic || ("0"..."9").contains(c) || c == "_" || c == "$"
        }
        func flush(upTo end: Int) {
            if let firstLine = startLine {
                let sql = String(String.UnicodeScalarView(chars[start..<end]))
                statements.append(Statement(sql: sql.trimmingWhitespace(), line: firstLine))
            }
            startLine = nil
        }
        func advance() {
            if chars[index] == "\n" { line += 1 }
            index += 1
        }

        while index < chars.count {
            let c = chars[index]
            let next: Unicode.Scalar? = index + 1 < chars.count ? chars[index + 1] : nil
            if c == "-" && next == "-" {
                while index < chars.count && chars[index] != "\n" { advance() }
                continue
            }
            if c == "/" && next == "*" {
                var depth = 0
                repeat {
                    if chars[index] == "/" && index + 1 < chars.count && chars[index + 1] == "*" {
                        depth += 1
                        advance()
                    } else if chars[index] == "*" && index + 1 < chars.count && chars[index + 1] == "/" {
                        depth -= 1
                        advance()
                    }
                    advance()
                } while depth > 0 && index < chars.count
                continue
            }
            if c == ";" {
                flush(upTo: index)
                advance()
                continue
            }
            if !c.properties.isWhitespace && startLine == nil {
                startLine = line
                start = index
            }
            if c == "'" {
                let backslashEscapes =
                    index > 0 && (chars[index - 1] == "E" || chars[index - 1] == "e")
                    && (index < 2 || !isIdentifierChar(chars[index - 2]))
                advance()
                while index < chars.count {
                    if backslashEscapes && chars[index] == "\\" {
                        advance()
                        if index < chars.count { advance() }
                        continue
                    }
                    if chars[index] == "'" {
                        if index + 1 < chars.count && chars[index + 1] == "'" {
                            advance(); advance()
                            continue
                        }
                        advance()
                        break
                    }
                    advance()
                }
                continue
            }
            if c == "\"" {
                advance()
                while index < chars.count {
                    if chars[index] == "\"" {
                        if index + 1 < chars.count && chars[index + 1] == "\"" {
                            advance(); advance()
                            continue
                        }
                        advance()
                        break
                    }
                    advance()
                }
                continue
            }
            if c == "$" && (index == 0 || !isIdentifierChar(chars[index - 1])) {
                // A dollar quote's tag: $$ or $name$ (not $1, a parameter).
                var end = index + 1
                while end < chars.count && chars[end] != "$" && (chars[end].properties.isAlphabetic || chars[end] == "_" || (end > index + 1 && ("0"..."9").contains(chars[end]))) {
                    end += 1
                }
                if end < chars.count && chars[end] == "$" {
                    let tag = Array(chars[index...end])
                    while index <= end { advance() }
                    while index < chars.count {
                        if chars[index] == "$" && index + tag.count <= chars.count && Array(chars[index..<(index + tag.count)]) == tag {
                            for _ in 0..<tag.count { advance() }
                            break
                        }
                        advance()
                    }
                    continue
                }
            }
            advance()
        }
        flush(upTo: chars.count)
        return statements
    }
}

extension String {
    func trimmingWhitespace() -> String {
        var scalars = Substring(self).unicodeScalars[...]
        while let first = scalars.first, first.properties.isWhitespace { scalars = scalars.dropFirst() }
        while let last = scalars.last, last.properties.isWhitespace { scalars = scalars.dropLast() }
        return String(String.UnicodeScalarView(scalars))
    }
}
