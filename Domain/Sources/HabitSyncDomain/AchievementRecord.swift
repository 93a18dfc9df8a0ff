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
