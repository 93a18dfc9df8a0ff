import Foundation

/// An `achievements` record: one per user and `achievementId`, the earliest unlock wins.
public struct AchievementRecord: Sendable, Equatable {
    public var achievementId: String
    public var title: String
    public var description: String
    public var unlockedAt: Date
    public var xpAwarded: Int

    public init(_ fields: [String: JSONValue], context: ValidationContext) throws(ChangeRejection) {
        var reader = FieldReader(fields, context: context)
        self = Self.unread
        try Self.declared.read(into: &self, &reader)
        try reader.finish()
    }

    /// What reading starts from; every required field is read over it or the read fails.
    private static let unread = AchievementRecord(achievementId: "", title: "", description: "", unlockedAt: Date(timeIntervalSince1970: 0), xpAwarded: 0)

    private init(achievementId: String, title: String, description: String, unlockedAt: Date, xpAwarded: Int) {
        self.achievementId = achievementId
        self.title = title
        self.description = description
        self.unlockedAt = unlockedAt
        self.xpAwarded = xpAwarded
    }
}

extension AchievementRecord {
    /// One per `achievementId`; its first unlock stays its unlock, whoever wrote it last.
    public static let fields = declared.map(\.erased)

    static let declared: [DeclaredField<AchievementRecord>] = {
        let declare = RecordFieldDeclarer<AchievementRecord>(merge: .latestWins) { if case .achievement(let a) = $0 { a } else { nil } }
        return [
            declare.field(
                "achievementId", "achievement_id", .text,
                read: { a, r throws(ChangeRejection) in a.achievementId = try r.required("achievementId", try r.string("achievementId", length: 1...100)) }
            ) { .text($0.achievementId) },
            declare.field("title", "title", .text, read: { a, r throws(ChangeRejection) in a.title = try r.required("title", try r.string("title", length: 1...200)) }) {
                .text($0.title)
            },
            declare.field(
                "description", "description", .text,
                read: { a, r throws(ChangeRejection) in a.description = try r.string("description", length: 0...2000, paragraphs: true) ?? "" }
            ) { .text($0.description) },
            declare.field(
                "unlockedAt", "unlocked_at", .timestamptz, merge: .earliestWins,
                read: { a, r throws(ChangeRejection) in a.unlockedAt = try r.required("unlockedAt", try r.timestamp("unlockedAt", event: true)) }
            ) { .timestamp($0.unlockedAt) },
            declare.field("xpAwarded", "xp_awarded", .int4, read: { a, r throws(ChangeRejection) in a.xpAwarded = try r.integer("xpAwarded", range: 0...Int.max) ?? 0 }) {
                .integer($0.xpAwarded)
            },
        ]
    }()
}
