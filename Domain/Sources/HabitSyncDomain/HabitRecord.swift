import Foundation

/// A `habits` record as validated from the wire.
public struct HabitRecord: Sendable, Equatable {
    public var name: String
    public var habitDescription: String
    public var icon: String
    public var color: String?
    public var habitType: String
    public var goalCount: Int
    public var goalUnit: String
    public var schedule: HabitSchedule
    public var baselineCount: Int?
    public var baselineUnit: String?
    public var startDate: LocalDate
    public var endDate: LocalDate?
    /// Nil: the server time of the first write.
    public var createdAt: Date?
    /// The habit's place in the user's list (0 first); nil: the app's own order.
    public var sortOrder: Int?

    public init(_ fields: [String: JSONValue], context: ValidationContext) throws(ChangeRejection) {
        var reader = FieldReader(fields, context: context)
        self = Self.unread
        try Self.declared.read(into: &self, &reader)
        if habitType == "breaking" {
            // The goal of a breaking habit is a ceiling below where the user started.
            guard let baselineCount else { throw reader.fail("baselineCount", "is required for breaking habits") }
            guard baselineCount > goalCount else { throw reader.fail("baselineCount", "must be greater than goalCount (\(goalCount)) for breaking habits, got \(baselineCount)") }
        }
        if let endDate, endDate < startDate { throw reader.fail("endDate", "must not be before startDate (\(startDate))") }
        try reader.finish()
    }

    /// What reading starts from; every required field is read over it or the read fails.
    private static let unread = HabitRecord(
        name: "", habitDescription: "", icon: "", color: nil, habitType: "", goalCount: 0, goalUnit: "", schedule: .daily, baselineCount: nil,
        baselineUnit: nil, startDate: LocalDate(dayNumber: 0), endDate: nil, createdAt: nil, sortOrder: nil)

    private init(
        name: String, habitDescription: String, icon: String, color: String?, habitType: String, goalCount: Int, goalUnit: String,
        schedule: HabitSchedule, baselineCount: Int?, baselineUnit: String?, startDate: LocalDate, endDate: LocalDate?, createdAt: Date?,
        sortOrder: Int?
    ) {
        self.name = name
        self.habitDescription = habitDescription
        self.icon = icon
        self.color = color
        self.habitType = habitType
        self.goalCount = goalCount
        self.goalUnit = goalUnit
        self.schedule = schedule
        self.baselineCount = baselineCount
        self.baselineUnit = baselineUnit
        self.startDate = startDate
        self.endDate = endDate
        self.createdAt = createdAt
        self.sortOrder = sortOrder
    }
}

extension HabitRecord {
    /// The fields as stored and rendered (`RecordField`), each with the rule it is read by;
    /// the `schedule` object is three columns.
    public static let fields = declared.map(\.erased)

    static let declared: [DeclaredField<HabitRecord>] = {
        let declare = RecordFieldDeclarer<HabitRecord>(merge: .latestWins) { if case .habit(let h) = $0 { h } else { nil } }
        return [
            declare.field("name", "name", .text, read: { h, r throws(ChangeRejection) in h.name = try r.required("name", try r.string("name", length: 1...200, trimmed: true)) }) {
                .text($0.name)
            },
            declare.field(
                "habitDescription", "habit_description", .text,
                read: { h, r throws(ChangeRejection) in h.habitDescription = try r.string("habitDescription", length: 0...2000, paragraphs: true) ?? "" }
            ) { .text($0.habitDescription) },
            declare.field("icon", "icon", .text, read: { h, r throws(ChangeRejection) in h.icon = try r.string("icon", length: 0...100) ?? "" }) { .text($0.icon) },
            declare.field(
                "color", "color", .text,
                read: { h, r throws(ChangeRejection) in
                    h.color = try r.string("color")
                    if let color = h.color, !TextRules.isColor(color) { throw r.fail("color", "must be #RRGGBB or #RRGGBBAA, not '\(TextRules.quoted(color))'") }
                }
            ) { .text($0.color) },
            declare.field(
                "habitType", "habit_type", .text,
                read: { h, r throws(ChangeRejection) in h.habitType = try r.required("habitType", try r.oneOf("habitType", ["formation", "breaking"])) }
            ) { .text($0.habitType) },
            declare.field(
                "goalCount", "goal_count", .int4, read: { h, r throws(ChangeRejection) in h.goalCount = try r.required("goalCount", try r.integer("goalCount", range: 1...Int.max)) }
            ) { .integer($0.goalCount) },
            declare.field(
                "goalUnit", "goal_unit", .text, read: { h, r throws(ChangeRejection) in h.goalUnit = try r.required("goalUnit", try r.string("goalUnit", length: 1...50)) }
            ) { .text($0.goalUnit) },
            declare.field(
                "schedule", columns: [StoredColumn("schedule_type", .text), StoredColumn("schedule_n", .int4), StoredColumn("schedule_weekdays", .textArray)],
                read: { h, r throws(ChangeRejection) in
                    h.schedule = try HabitSchedule.read(try r.required("schedule", try r.object("schedule")), context: r.context)
                },
                stored: { [.text($0.schedule.type), .integer($0.schedule.n), .texts($0.schedule.weekdays?.map(\.rawValue))] },
                canonical: { $0.schedule.canonical }, fromColumns: HabitSchedule.canonical(columns:)),
            declare.field(
                "baselineCount", "baseline_count", .int4, read: { h, r throws(ChangeRejection) in h.baselineCount = try r.integer("baselineCount", range: 0...Int.max) }
            ) { .integer($0.baselineCount) },
            declare.field(
                "baselineUnit", "baseline_unit", .text, read: { h, r throws(ChangeRejection) in h.baselineUnit = try r.string("baselineUnit", length: 0...50) }
            ) { .text($0.baselineUnit) },
            declare.field(
                "startDate", "start_date", .date, read: { h, r throws(ChangeRejection) in h.startDate = try r.required("startDate", try r.localDate("startDate")) }
            ) { .date($0.startDate) },
            declare.field("endDate", "end_date", .date, read: { h, r throws(ChangeRejection) in h.endDate = try r.localDate("endDate") }) { .date($0.endDate) },
            declare.field("createdAt", "created_at", .timestamptz, read: { h, r throws(ChangeRejection) in h.createdAt = try r.timestamp("createdAt") }) {
                .timestamp($0.createdAt)
            },
            declare.field("sortOrder", "sort_order", .int4, read: { h, r throws(ChangeRejection) in h.sortOrder = try r.integer("sortOrder", range: 0...Int.max) }) {
                .integer($0.sortOrder)
            },
        ]
    }()
}
