import Foundation

/// A `reminders` record.
public struct ReminderRecord: Sendable, Equatable {
    public var habitId: UUID
    /// `HH:mm`, local time of day.
    public var time: String
    public var isActive: Bool
    public var notificationIdentifier: String?

    public init(_ fields: [String: JSONValue], context: ValidationContext) throws(ChangeRejection) {
        var reader = FieldReader(fields, context: context)
        habitId = try reader.required("habitId", try reader.uuid("habitId"))
        time = try reader.required("time", try reader.string("time"))
        if !TextRules.isTimeOfDay(time) {
            throw reader.fail("time", "must be HH:mm (00:00–23:59), not '\(TextRules.quoted(time))'")
        }
        isActive = try reader.bool("isActive") ?? true
        notificationIdentifier = try reader.string("notificationIdentifier", length: 0...200)
        try reader.finish()
    }
}

extension ReminderRecord {
    public static let fields: [RecordField] = {
        let declare = RecordFieldDeclarer<ReminderRecord>(merge: .latestWins) { if case .reminder(let r) = $0 { r } else { nil } }
        return [
            declare.field("habitId", "habit_id", .uuid) { .uuid($0.habitId) },
            declare.field("time", "time_of_day", .time) { .text($0.time) },
            declare.field("isActive", "is_active", .bool) { .bool($0.isActive) },
            declare.field("notificationIdentifier", "notification_identifier", .text) { .text($0.notificationIdentifier) },
        ]
    }()
}
