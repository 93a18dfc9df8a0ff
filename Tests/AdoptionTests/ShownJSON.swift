import Foundation

/// A JSON answer as the docs show it, compared with what the server printed. The docs' own
/// shorthand is the placeholder syntax:
///
/// - `…` where a member could be (`{…}`, `, …}`): the object may have more members;
/// - `…` where an element could be (`, …]`, `[…]`): the array may have more elements;
/// - a string ending in `…` (`"6f1c…"`): any string that starts with what precedes it (`"…"`,
///   or a bare `…` as a value: any value at all);
/// - the values of `epoch`, `cursor`, `hash`, `serverTime` and `createdAt` differ on every
///   database: any string matches.
///
/// Everything else must be equal: the same members, the same number of elements, the same values.
enum ShownJSON {
    static let volatileKeys: Set<String> = ["epoch", "cursor", "hash", "serverTime", "createdAt"]

    /// The mismatches between `shown` and `actual`, each with its path; empty when they agree.
    static func mismatches(shown: String, actual: String) -> [String] {
        guard let expected = parse(expand(shown)) else { return ["the docs' JSON does not parse: \(shown)"] }
        guard let printed = parse(actual) else { return ["the server printed no JSON: \(actual.prefix(300))"] }
        var found: [String] = []
        compare(expected, printed, path: "$", key: nil, into: &found)
        return found
    }

    /// The shorthand written out as JSON: `: …` → `:"…"`, `{…}` → `{"…":"…"}`, `, …}` →
    /// `,"…":"…"}`, `, …]` → `,"…"]`, `[…]` → `["…"]`.
    static func expand(_ text: String) -> String {
        text.replacing(/:\s*…(?=\s*[,}])/, with: #":"…""#)
            .replacing(/\{\s*…\s*\}/, with: #"{"…":"…"}"#)
            .replacing(/,\s*…\s*\}/, with: #","…":"…"}"#)
            .replacing(/,\s*…\s*\]/, with: #","…"]"#)
            .replacing(/\[\s*…\s*\]/, with: #"["…"]"#)
    }

    static func parse(_ text: String) -> Any? {
        try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    }

    static func compare(_ expected: Any, _ actual: Any, path: String, key: String?, into found: inout [String]) {
        if let text = expected as? String {
            if text == "…" { return }
            if let key, volatileKeys.contains(key) {
                if !(actual is String) { found.append("\(path): a string, got \(actual)") }
                return
            }
            guard let printed = actual as? String else { found.append("\(path): \"\(text)\", got \(actual)"); return }
            if text.hasSuffix("…") {
                if !printed.hasPrefix(String(text.dropLast())) { found.append("\(path): \"\(text)\", got \"\(printed)\"") }
            } else if printed != text {
                found.append("\(path): \"\(text)\", got \"\(printed)\"")
            }
            return
        }
        if let object = expected as? [String: Any] {
            guard let printed = actual as? [String: Any] else { found.append("\(path): an object, got \(actual)"); return }
            let open = object["…"] != nil
            for (name, value) in object where name != "…" {
                guard let other = printed[name] else { found.append("\(path).\(name): shown, not printed"); continue }
                compare(value, other, path: "\(path).\(name)", key: name, into: &found)
            }
            if !open {
                for name in printed.keys.sorted() where object[name] == nil { found.append("\(path).\(name): printed, not shown") }
            }
            return
        }
        if let array = expected as? [Any] {
            guard let printed = actual as? [Any] else { found.append("\(path): an array, got \(actual)"); return }
            let open = (array.last as? String) == "…"
            let shown = open ? Array(array.dropLast()) : array
            if open ? printed.count < shown.count : printed.count != shown.count {
                found.append("\(path): \(shown.count)\(open ? " or more" : "") elements shown, \(printed.count) printed")
            }
            for (index, (value, other)) in zip(shown, printed).enumerated() {
                compare(value, other, path: "\(path)[\(index)]", key: nil, into: &found)
            }
            return
        }
        if expected is NSNull {
            if !(actual is NSNull) { found.append("\(path): null, got \(actual)") }
            return
        }
        if let number = expected as? NSNumber, let other = actual as? NSNumber {
            if number != other { found.append("\(path): \(number), got \(other)") }
            return
        }
        found.append("\(path): \(expected), got \(actual)")
    }
}
