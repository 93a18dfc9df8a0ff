import Foundation
import Logging
import Synchronization

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

    public func log(event: LogEvent) {
        var fields = metadata
        if let provided = metadataProvider?.get() { fields.merge(provided) { _, new in new } }
        if let extra = event.metadata { fields.merge(extra) { _, new in new } }
        let timestamp = Date().formatted(.iso8601.year().month().day().dateSeparator(.dash).time(includingFractionalSeconds: true).timeSeparator(.colon))
        let line: String
        switch format {
        case .json:
            var object: [String: Any] = ["ts": timestamp, "level": event.level.rawValue, "msg": event.message.description, "logger": label]
            for (key, value) in fields { object[key] = Self.jsonValue(value) }
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
            line = String(decoding: data, as: UTF8.self)
        case .logfmt:
            var parts = ["ts=\(timestamp)", "level=\(event.level.rawValue)", "msg=\(Self.logfmtQuote(event.message.description))"]
            for key in fields.keys.sorted() { parts.append("\(key)=\(Self.logfmtQuote((fields[key]?.description ?? "")))") }
            line = parts.joined(separator: " ")
        }
        Self.output.withLock { _ in
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
    }

    private static func jsonValue(_ value: Logger.Metadata.Value) -> Any {
        switch value {
        case .string(let string): return string
        case .stringConvertible(let convertible): return convertible.description
        case .array(let array): return array.map(jsonValue)
        case .dictionary(let dictionary): return dictionary.mapValues(jsonValue)
        }
    }

    private static func logfmtQuote(_ text: String) -> String {
        if !text.isEmpty && !text.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" || $0.isNewline }) { return text }
        return "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "\n", with: "\\n") + "\""
    }
}
