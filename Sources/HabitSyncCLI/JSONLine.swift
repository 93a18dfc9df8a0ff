import Foundation

/// What a command prints with `--json`: one JSON value on one line, keys sorted, so scripts
/// can read it and compare runs.
enum JSONLine {
    static func print(_ value: Any) throws {
        Swift.print(String(decoding: try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]), as: UTF8.self))
    }
}
