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
        self = Self.unread
        try Self.declared.read(into: &self, &reader)
        try reader.finish()
    }

    /// What reading starts from; every required field is read over it or the read fails.
    private static let unread = DailyProgressRecord(
        habitId: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)), date: LocalDate(dayNumber: 0), progressCount: 0, goalCount: 0, timestamps: [], difficulty: nil, skipReason: nil,
        skipNote: nil)
}

extension DailyProgressRecord {
    /// One record per habit and day; its count adds up every device's additions, its other
    /// fields settle with the whole record.
    public static let fields = declared.map(\.erased)

    static let declared: [DeclaredField<DailyProgressRecord>] = {
        let declare = RecordFieldDeclarer<DailyProgressRecord>(merge: .wholeRecord) { if case .dailyProgress(let p) = $0 { p } else { nil } }
        return [
            declare.field("habitId", "habit_id", .uuid, read: { p, r throws(ChangeRejection) in p.habitId = try r.required("habitId", try r.uuid("habitId")) }) {
                .uuid($0.habitId)
            },
            declare.field("date", "date", .date, read: { p, r throws(ChangeRejection) in p.date = try r.required("date", try r.localDate("date")) }) { .date($0.date) },
            declare.field(
                "progressCount", "progress_count", .int4, merge: .counter,
                read: { p, r throws(ChangeRejection) in p.progressCount = try r.required("progressCount", try r.integer("progressCount", range: 0...Int.max)) }
            ) { .integer($0.progressCount) },
            declare.field(
                "goalCount", "goal_count", .int4, read: { p, r throws(ChangeRejection) in p.goalCount = try r.required("goalCount", try r.integer("goalCount", range: 1...Int.max)) }
            ) { .integer($0.goalCount) },
            declare.field(
                "timestamps", "timestamps", .timestamptzArray,
                read: { p, r throws(ChangeRejection) in
                    var timestamps: [Date] = []
                    for (index, item) in (try r.array("timestamps", maxCount: 1000) ?? []).enumerated() {
                        guard case .string(let text) = item else { throw r.element("timestamps", index, "must be an RFC 3339 timestamp") }
                        timestamps.append(try r.parseTimestamp("timestamps[\(index)]", text, event: true))
                    }
                    p.timestamps = timestamps
                }
            ) { .timestamps($0.timestamps) },
            declare.field("difficulty", "difficulty", .int2, read: { p, r throws(ChangeRejection) in p.difficulty = try r.integer("difficulty", range: 1...5) }) {
                .integer($0.difficulty)
            },
            declare.field("skipReason", "skip_reason", .text, read: { p, r throws(ChangeRejection) in p.skipReason = try r.oneOf("skipReason", Self.skipReasons) }) {
                .text($0.skipReason)
            },
            declare.field(
                "skipNote", "skip_note", .text, read: { p, r throws(ChangeRejection) in p.skipNote = try r.string("skipNote", length: 0...500, paragraphs: true) }
            ) { .text($0.skipNote) },
        ]
    }()
}
