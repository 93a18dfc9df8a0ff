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
        self = Self.unread
        try Self.declared.read(into: &self, &reader)
        if pauseDuration > timerDuration { throw reader.fail("pauseDuration", "must not exceed timerDuration (\(timerDuration)), got \(pauseDuration)") }
        if eventType == "proceed_to_app", TextRules.trimmingSpaces(targetAppName ?? "").isEmpty {
            throw reader.fail("targetAppName", "is required for proceed_to_app events")
        }
        try reader.finish()
    }

    /// What reading starts from; every required field is read over it or the read fails.
    private static let unread = UsageEventRecord(eventType: "", timestamp: Date(timeIntervalSince1970: 0), targetAppName: nil, pauseDuration: 0, timerDuration: 0)

    private init(eventType: String, timestamp: Date, targetAppName: String?, pauseDuration: Double, timerDuration: Double) {
        self.eventType = eventType
        self.timestamp = timestamp
        self.targetAppName = targetAppName
        self.pauseDuration = pauseDuration
        self.timerDuration = timerDuration
    }
}

extension UsageEventRecord {
    public static let fields = declared.map(\.erased)

    /// timerDuration is read before pauseDuration, which must not exceed it.
    static let declared: [DeclaredField<UsageEventRecord>] = {
        let declare = RecordFieldDeclarer<UsageEventRecord>(merge: .appendOnly) { if case .usageEvent(let e) = $0 { e } else { nil } }
        return [
            declare.field(
                "eventType", "event_type", .text,
                read: { e, r throws(ChangeRejection) in e.eventType = try r.required("eventType", try r.oneOf("eventType", ["exit_to_focus", "deepen_pause", "proceed_to_app"])) }
            ) { .text($0.eventType) },
            declare.field(
                "timestamp", "occurred_at", .timestamptz,
                read: { e, r throws(ChangeRejection) in e.timestamp = try r.required("timestamp", try r.timestamp("timestamp", event: true)) }
            ) { .timestamp($0.timestamp) },
            declare.field(
                "targetAppName", "target_app_name", .text, read: { e, r throws(ChangeRejection) in e.targetAppName = try r.string("targetAppName", length: 0...200) }
            ) { .text($0.targetAppName) },
            declare.field(
                "timerDuration", "timer_duration", .float8,
                read: { e, r throws(ChangeRejection) in
                    e.timerDuration = try r.required("timerDuration", try r.number("timerDuration", range: Double.leastNonzeroMagnitude...Double.greatestFiniteMagnitude))
                }
            ) { .number($0.timerDuration) },
            declare.field(
                "pauseDuration", "pause_duration", .float8,
                read: { e, r throws(ChangeRejection) in
                    e.pauseDuration = try r.required("pauseDuration", try r.number("pauseDuration", range: 0...Double.greatestFiniteMagnitude))
                }
            ) { .number($0.pauseDuration) },
        ]
    }()
}
