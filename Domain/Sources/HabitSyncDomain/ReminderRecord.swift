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
        self = Self.unread
        try Self.declared.read(into: &self, &reader)
        try reader.finish()
    }

    /// What reading starts from; every required field is read over it or the read fails.
    private static let unread = ReminderRecord(habitId: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)), time: "", isActive: true, notificationIdentifier: nil)

    private init(habitId: UUID, time: String, isActive: Bool, notificationIdentifier: String?) {
        self.habitId = habitId
        self.time = time
        self.isActive = isActive
        self.notificationIdentifier = notificationIdentifier
    }
}

extension ReminderRecord {
    public static let fields = declared.map(\.erased)

    static let declared: [DeclaredField<ReminderRecord>] = {
        let declare = RecordFieldDeclarer<ReminderRecord>(merge: .latestWins) { if case .reminder(let r) = $0 { r } else { nil } }
        return [
            declare.field("habitId", "habit_id", .uuid, read: { m, r throws(ChangeRejection) in m.habitId = try r.required("habitId", try r.uuid("habitId")) }) {
                .uuid($0.habitId)
            },
            declare.field(
                "time", "time_of_day", .time,
                read: { m, r throws(ChangeRejection) in
                    m.time = try r.required("time", try r.string("time"))
                    if !TextRules.isTimeOfDay(m.time) { throw r.fail("time", "must be HH:mm (00:00–23:59), not '\(TextRules.quoted(m.time))'") }
                }
            ) { .text($0.time) },
            declare.field("isActive", "is_active", .bool, read: { m, r throws(ChangeRejection) in m.isActive = try r.bool("isActive") ?? true }) { .bool($0.isActive) },
            declare.field(
                "notificationIdentifier", "notification_identifier", .text,
                read: { m, r throws(ChangeRejection) in m.notificationIdentifier = try r.string("notificationIdentifier", length: 0...200) }
            ) { .text($0.notificationIdentifier) },
        ]
    }()
}
