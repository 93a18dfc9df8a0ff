import Foundation
import HabitSyncDomain
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Writes one log event per line to stderr, as JSON or logfmt, with the logger's metadata
/// (request id, route, status, duration…). Never given tokens, secrets or record payloads:
/// the callers log identifiers and counts only.
public struct StructuredLogHandler: LogHandler {
    public enum Format: String, Sendable, CaseIterable {
        case json
        case logfmt
    }

    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    public var logLevel: Logger.Level
    private let label: String
    private let format: Format

    public init(label: String, format: Format, level: Logger.Level) {
        self.label = label
        self.format = format
        self.logLevel = level
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    private static let output = Mutex<Void>(())
    private static let dropped = Atomic<Int>(0)

    /// Lines that could not be written (standard error closed, a full disk, a reader that went
    /// away): dropped, never a trap (`/metrics`: `habitsync_log_lines_dropped_total`).
    public static var droppedLines: Int { dropped.load(ordering: .relaxed) }

    public func log(event: LogEvent) {
        var fields = metadata
        if let provided = metadataProvider?.get() { fields.merge(provided) { _, new in new } }
        if let extra = event.metadata { fields.merge(extra) { _, new in new } }
        // The wire format's own writer: Foundation's date formatting was a measurable share of
        // a small push's CPU (issue 46).
        let timestamp = WireTime.format(Date())
        var line: String
        switch format {
        case .json:
            line = "{" + "\"ts\":" + JSONText.string(timestamp) + ",\"level\":" + JSONText.string(event.level.rawValue)
            line += ",\"msg\":" + JSONText.string(event.message.description) + ",\"logger\":" + JSONText.string(label)
            for key in fields.keys.sorted() where !["ts", "level", "msg", "logger"].contains(key) {
                line += "," + JSONText.string(key) + ":" + Self.jsonValue(fields[key] ?? .string("")).jsonText
            }
            line += "}"
        case .logfmt:
            var parts = ["ts=\(timestamp)", "level=\(event.level.rawValue)", "msg=\(Self.logfmtQuote(event.message.description))"]
            for key in fields.keys.sorted() { parts.append("\(key)=\(Self.logfmtQuote((fields[key]?.description ?? "")))") }
            line = parts.joined(separator: " ")
        }
        line += "\n"
        Self.output.withLock { _ in
            if !StandardError.write(line) { Self.dropped.add(1, ordering: .relaxed) }
        }
    }

    private static func jsonValue(_ value: Logger.Metadata.Value) -> JSONValue {
        switch value {
        case .string(let string): .string(string)
        case .stringConvertible(let convertible): .string(convertible.description)
        case .array(let array): .array(array.map(jsonValue))
        case .dictionary(let dictionary): .object(dictionary.mapValues(jsonValue))
        }
    }

    private static func logfmtQuote(_ text: String) -> String {
        if !text.isEmpty && !text.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" || $0.isNewline }) { return text }
        return "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "\n", with: "\\n") + "\""
    }
}
