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
        self = Self.unread
        try Self.declared.read(into: &self, &reader)
        if isRunning, endTime != nil { throw reader.fail("endTime", "must be null while the session is \(state)") }
        if !isRunning {
            guard let endTime else { throw reader.fail("endTime", "is required once the session is \(state)") }
            guard endTime >= startTime else { throw reader.fail("endTime", "must not be before startTime") }
        }
        try reader.finish()
    }

    /// What reading starts from; every required field is read over it or the read fails.
    private static let unread = FocusSessionRecord(
        startTime: Date(timeIntervalSince1970: 0), endTime: nil, state: "", duration: 0, pausedDuration: 0, createdAt: Date(timeIntervalSince1970: 0))

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
    public static let fields = declared.map(\.erased)

    static let declared: [DeclaredField<FocusSessionRecord>] = {
        let declare = RecordFieldDeclarer<FocusSessionRecord>(merge: .wholeRecord) { if case .focusSession(let f) = $0 { f } else { nil } }
        return [
            declare.field(
                "startTime", "start_time", .timestamptz,
                read: { f, r throws(ChangeRejection) in f.startTime = try r.required("startTime", try r.timestamp("startTime", event: true)) }
            ) { .timestamp($0.startTime) },
            declare.field("endTime", "end_time", .timestamptz, read: { f, r throws(ChangeRejection) in f.endTime = try r.timestamp("endTime", event: true) }) {
                .timestamp($0.endTime)
            },
            declare.field("state", "state", .text, read: { f, r throws(ChangeRejection) in f.state = try r.required("state", try r.oneOf("state", Self.states)) }) {
                .text($0.state)
            },
            declare.field(
                "duration", "duration", .float8, read: { f, r throws(ChangeRejection) in f.duration = try r.required("duration", try r.number("duration", range: 0...1500)) }
            ) { .number($0.duration) },
            declare.field(
                "pausedDuration", "paused_duration", .float8,
                read: { f, r throws(ChangeRejection) in f.pausedDuration = try r.number("pausedDuration", range: 0...Double.greatestFiniteMagnitude) ?? 0 }
            ) { .number($0.pausedDuration) },
            // Read after startTime, its default.
            declare.field("createdAt", "created_at", .timestamptz, read: { f, r throws(ChangeRejection) in f.createdAt = try r.timestamp("createdAt") ?? f.startTime }) {
                .timestamp($0.createdAt)
            },
        ]
    }()
}
