import Foundation

/// A `dailyProgress` record: one per habit and calendar day.
public struct DailyProgressRecord: Sendable, Equatable {
    public static let skipReasons = ["medical", "travel", "equipment", "weather", "emergency", "rest", "other"]

    public var habitId: UUID
    public var date: LocalDate
    public var progressCount: Int
    public var goalCount: Int
    public var timestamps: [Date]
    public var difficulty: Int?
    public var skipReason: String?
    public var skipNote: String?

    /// A record as stored (the store reads it from typed columns, which PostgreSQL's
    /// constraints already hold to the rules the wire init checks).
    public init(
        habitId: UUID, date: LocalDate, progressCount: Int, goalCount: Int, timestamps: [Date], difficulty: Int?, skipReason: String?, skipNote: String?
    ) {
        self.habitId = habitId
        self.date = date
        self.progressCount = progressCount
        self.goalCount = goalCount
        self.timestamps = timestamps
        self.difficulty = difficulty
        self.skipReason = skipReason
        self.skipNote = skipNote
    }

    public init(_ fields: [String: JSONValue], context: ValidationContext) throws(ChangeRejection) {
        var reader = FieldReader(fields, context: context)
        habitId = try reader.required("habitId", try reader.uuid("habitId"))
        date = try reader.required("date", try reader.localDate("date"))
        progressCount = try reader.required("progressCount", try reader.integer("progressCount", range: 0...Int.max))
        goalCount = try reader.required("goalCount", try reader.integer("goalCount", range: 1...Int.max))
        var timestamps: [Date] = []
        for (index, item) in (try reader.array("timestamps", maxCount: 1000) ?? []).enumerated() {
            guard case .string(let text) = item else { throw reader.element("timestamps", index, "must be an RFC 3339 timestamp") }
            timestamps.append(try reader.parseTimestamp("timestamps[\(index)]", text, event: true))
        }
        self.timestamps = timestamps
        difficulty = try reader.integer("difficulty", range: 1...5)
        skipReason = try reader.oneOf("skipReason", Self.skipReasons)
        skipNote = try reader.string("skipNote", length: 0...500, paragraphs: true)
        try reader.finish()
    }
}
