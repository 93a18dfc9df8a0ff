import Foundation
import HabitSyncDomain

/// An `achievements` record: one per `achievementId`, the earliest `unlockedAt` wins.
public struct Achievement: WritableModel {
    public static let collection = SyncCollection.achievements

    public var achievementId: String
    public var title: String
    public var description: String
    public var unlockedAt: Date
    public var xpAwarded: Int

    public init(achievementId: String, title: String, description: String = "", unlockedAt: Date, xpAwarded: Int = 0) {
        self.achievementId = achievementId
        self.title = title
        self.description = description
        self.unlockedAt = unlockedAt
        self.xpAwarded = xpAwarded
    }

    private enum CodingKeys: String, CodingKey { case achievementId, title, description, unlockedAt, xpAwarded }

    /// A field the wire lets a device leave out takes the server's default here too.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        achievementId = try container.decode(String.self, forKey: .achievementId)
        title = try container.decode(String.self, forKey: .title)
        description = try container.decodeIfPresent(String.self, forKey: .description) ?? ""
        unlockedAt = try container.decode(Date.self, forKey: .unlockedAt)
        xpAwarded = try container.decodeIfPresent(Int.self, forKey: .xpAwarded) ?? 0
    }
}
