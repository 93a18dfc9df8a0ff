import Foundation

/// A `focusSessions` record. `completed` and `abandoned` are final.
public struct FocusSessionRecord: Sendable, Equatable {
    public static let states = ["active", "paused", "completed", "abandoned"]

    public var startTime: Date
    public var endTime: Date?
    public var state: String
    public var duration: Double
    public var pausedDuration: Double
    public var createdAt: Date

    public var isRunning: Bool { state == "active" || state == "paused" }
    public static func isTerminal(_ state: String) -> Bool { state == "completed" || state == "abandoned" }

    public init(_ fields: [String: JSONValue], context: ValidationContext) throws(ChangeRejection) {
        var reader = FieldReader(fields, context: context)
        startTime = try reader.required("startTime", try reader.timestamp("startTime", event: true))
        endTime = try reader.timestamp("endTime", event: true)
        state = try reader.required("state", try reader.oneOf("state", Self.states))
        duration = try reader.required("duration", try reader.number("duration", range: 0...1500))
        pausedDuration = try reader.number("pausedDuration", range: 0...Double.greatestFiniteMagnitude) ?? 0
        createdAt = try reader.timestamp("createdAt") ?? startTime
        if isRunning, endTime != nil { throw reader.fail("endTime", "must be null while the session is \(state)") }
        if !isRunning {
            guard let endTime else { throw reader.fail("endTime", "is required once the session is \(state)") }
            guard endTime >= startTime else { throw reader.fail("endTime", "must not be before startTime") }
        }
        try reader.finish()
    }

    public init(startTime: Date, endTime: Date?, state: String, duration: Double, pausedDuration: Double, createdAt: Date) {
        self.startTime = startTime
        self.endTime = endTime
        self.state = state
        self.duration = duration
        self.pausedDuration = pausedDuration
        self.createdAt = createdAt
    }
}

extension FocusSessionRecord {
    public static let fields: [RecordField] = {
        let declare = RecordFieldDeclarer<FocusSessionRecord>(merge: .wholeRecord) { if case .focusSession(let f) = $0 { f } else { nil } }
        return [
            declare.field("startTime", "start_time", .timestamptz) { .timestamp($0.startTime) },
            declare.field("endTime", "end_time", .timestamptz) { .timestamp($0.endTime) },
            declare.field("state", "state", .text) { .text($0.state) },
            declare.field("duration", "duration", .float8) { .number($0.duration) },
            declare.field("pausedDuration", "paused_duration", .float8) { .number($0.pausedDuration) },
            declare.field("createdAt", "created_at", .timestamptz) { .timestamp($0.createdAt) },
        ]
    }()
}
