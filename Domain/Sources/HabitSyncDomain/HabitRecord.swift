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
        if habitType == "breaking" {
            // The goal of a breaking habit is a ceiling below where the user started.
            guard let baselineCount else { throw reader.fail("baselineCount", "is required for breaking habits") }
            guard baselineCount > goalCount else { throw reader.fail("baselineCount", "must be greater than goalCount (\(goalCount)) for breaking habits, got \(baselineCount)") }
        }
        if let endDate, endDate < startDate { throw reader.fail("endDate", "must not be before startDate (\(startDate))") }
        try reader.finish()
    }
}
