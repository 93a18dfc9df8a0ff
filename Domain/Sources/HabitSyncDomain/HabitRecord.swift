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
        name = try reader.required("name", try reader.string("name", length: 1...200, trimmed: true))
        habitDescription = try reader.string("habitDescription", length: 0...2000, paragraphs: true) ?? ""
        icon = try reader.string("icon", length: 0...100) ?? ""
        color = try reader.string("color")
        if let color, !TextRules.isColor(color) {
            throw reader.fail("color", "must be #RRGGBB or #RRGGBBAA, not '\(TextRules.quoted(color))'")
        }
        habitType = try reader.required("habitType", try reader.oneOf("habitType", ["formation", "breaking"]))
        goalCount = try reader.required("goalCount", try reader.integer("goalCount", range: 1...Int.max))
        goalUnit = try reader.required("goalUnit", try reader.string("goalUnit", length: 1...50))
        schedule = try HabitSchedule.read(try reader.required("schedule", try reader.object("schedule")), context: context)
        baselineCount = try reader.integer("baselineCount", range: 0...Int.max)
        baselineUnit = try reader.string("baselineUnit", length: 0...50)
        startDate = try reader.required("startDate", try reader.localDate("startDate"))
        endDate = try reader.localDate("endDate")
        createdAt = try reader.timestamp("createdAt")
        sortOrder = try reader.integer("sortOrder", range: 0...Int.max)
        if habitType == "breaking" {
            // The goal of a breaking habit is a ceiling below where the user started.
            guard let baselineCount else { throw reader.fail("baselineCount", "is required for breaking habits") }
            guard baselineCount > goalCount else { throw reader.fail("baselineCount", "must be greater than goalCount (\(goalCount)) for breaking habits, got \(baselineCount)") }
        }
        if let endDate, endDate < startDate { throw reader.fail("endDate", "must not be before startDate (\(startDate))") }
        try reader.finish()
    }
}

extension HabitRecord {
    /// The fields as stored and rendered (`RecordField`); the `schedule` object is three columns.
    public static let fields: [RecordField] = {
        let declare = RecordFieldDeclarer<HabitRecord>(merge: .latestWins) { if case .habit(let h) = $0 { h } else { nil } }
        return [
            declare.field("name", "name", .text) { .text($0.name) },
            declare.field("habitDescription", "habit_description", .text) { .text($0.habitDescription) },
            declare.field("icon", "icon", .text) { .text($0.icon) },
            declare.field("color", "color", .text) { .text($0.color) },
            declare.field("habitType", "habit_type", .text) { .text($0.habitType) },
            declare.field("goalCount", "goal_count", .int4) { .integer($0.goalCount) },
            declare.field("goalUnit", "goal_unit", .text) { .text($0.goalUnit) },
            declare.field(
                "schedule", columns: [StoredColumn("schedule_type", .text), StoredColumn("schedule_n", .int4), StoredColumn("schedule_weekdays", .textArray)],
                stored: { [.text($0.schedule.type), .integer($0.schedule.n), .texts($0.schedule.weekdays?.map(\.rawValue))] },
                canonical: { $0.schedule.canonical }),
            declare.field("baselineCount", "baseline_count", .int4) { .integer($0.baselineCount) },
            declare.field("baselineUnit", "baseline_unit", .text) { .text($0.baselineUnit) },
            declare.field("startDate", "start_date", .date) { .date($0.startDate) },
            declare.field("endDate", "end_date", .date) { .date($0.endDate) },
            declare.field("createdAt", "created_at", .timestamptz) { .timestamp($0.createdAt) },
            declare.field("sortOrder", "sort_order", .int4) { .integer($0.sortOrder) },
        ]
    }()
}
