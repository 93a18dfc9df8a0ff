import Foundation

/// A `usageEvents` record (seed 002). Append-only.
public struct UsageEventRecord: Sendable, Equatable {
    public var eventType: String
    public var timestamp: Date
    public var targetAppName: String?
    public var pauseDuration: Double
    public var timerDuration: Double

    public init(_ fields: [String: JSONValue], context: ValidationContext) throws(ChangeRejection) {
        var reader = FieldReader(fields, context: context)
        eventType = try reader.required("eventType", try reader.oneOf("eventType", ["exit_to_focus", "deepen_pause", "proceed_to_app"]))
        timestamp = try reader.required("timestamp", try reader.timestamp("timestamp", event: true))
        targetAppName = try reader.string("targetAppName", length: 0...200)
        timerDuration = try reader.required("timerDuration", try reader.number("timerDuration", range: Double.leastNonzeroMagnitude...Double.greatestFiniteMagnitude))
        pauseDuration = try reader.required("pauseDuration", try reader.number("pauseDuration", range: 0...Double.greatestFiniteMagnitude))
        if pauseDuration > timerDuration { throw reader.fail("pauseDuration", "must not exceed timerDuration (\(timerDuration)), got \(pauseDuration)") }
        if eventType == "proceed_to_app", TextRules.trimmingSpaces(targetAppName ?? "").isEmpty {
            throw reader.fail("targetAppName", "is required for proceed_to_app events")
        }
        try reader.finish()
    }
}

extension UsageEventRecord {
    public static let fields: [RecordField] = {
        let declare = RecordFieldDeclarer<UsageEventRecord>(merge: .appendOnly) { if case .usageEvent(let e) = $0 { e } else { nil } }
        return [
            declare.field("eventType", "event_type", .text) { .text($0.eventType) },
            declare.field("timestamp", "occurred_at", .timestamptz) { .timestamp($0.timestamp) },
            declare.field("targetAppName", "target_app_name", .text) { .text($0.targetAppName) },
            declare.field("pauseDuration", "pause_duration", .float8) { .number($0.pauseDuration) },
            declare.field("timerDuration", "timer_duration", .float8) { .number($0.timerDuration) },
        ]
    }()
}
