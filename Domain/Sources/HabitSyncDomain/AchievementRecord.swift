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
        achievementId = try reader.required("achievementId", try reader.string("achievementId", length: 1...100))
        title = try reader.required("title", try reader.string("title", length: 1...200))
        description = try reader.string("description", length: 0...2000, paragraphs: true) ?? ""
        unlockedAt = try reader.required("unlockedAt", try reader.timestamp("unlockedAt", event: true))
        xpAwarded = try reader.integer("xpAwarded", range: 0...Int.max) ?? 0
        try reader.finish()
    }
}

extension AchievementRecord {
    /// One per `achievementId`; its first unlock stays its unlock, whoever wrote it last.
    public static let fields: [RecordField] = {
        let declare = RecordFieldDeclarer<AchievementRecord>(merge: .latestWins) { if case .achievement(let a) = $0 { a } else { nil } }
        return [
            declare.field("achievementId", "achievement_id", .text) { .text($0.achievementId) },
            declare.field("title", "title", .text) { .text($0.title) },
            declare.field("description", "description", .text) { .text($0.description) },
            declare.field("unlockedAt", "unlocked_at", .timestamptz, merge: .earliestWins) { .timestamp($0.unlockedAt) },
            declare.field("xpAwarded", "xp_awarded", .int4) { .integer($0.xpAwarded) },
        ]
    }()
}
