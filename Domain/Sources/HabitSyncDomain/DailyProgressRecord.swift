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

extension DailyProgressRecord {
    /// One record per habit and day; its count adds up every device's additions, its other
    /// fields settle with the whole record.
    public static let fields: [RecordField] = {
        let declare = RecordFieldDeclarer<DailyProgressRecord>(merge: .wholeRecord) { if case .dailyProgress(let p) = $0 { p } else { nil } }
        return [
            declare.field("habitId", "habit_id", .uuid) { .uuid($0.habitId) },
            declare.field("date", "date", .date) { .date($0.date) },
            declare.field("progressCount", "progress_count", .int4, merge: .counter) { .integer($0.progressCount) },
            declare.field("goalCount", "goal_count", .int4) { .integer($0.goalCount) },
            declare.field("timestamps", "timestamps", .timestamptzArray) { .timestamps($0.timestamps) },
            declare.field("difficulty", "difficulty", .int2) { .integer($0.difficulty) },
            declare.field("skipReason", "skip_reason", .text) { .text($0.skipReason) },
            declare.field("skipNote", "skip_note", .text) { .text($0.skipNote) },
        ]
    }()
}
