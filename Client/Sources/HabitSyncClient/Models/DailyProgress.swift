import Foundation
import HabitSyncDomain

/// A `dailyProgress` record: one per habit and day (two devices' records of the same day
/// merge on the server, and the device re-keys its copy to the id the server keeps).
public struct DailyProgress: DeletableModel {
    public static let collection = SyncCollection.dailyProgress

    public enum SkipReason: String, Codable, Sendable { case medical, travel, equipment, weather, emergency, rest, other }

    public var habitId: UUID
    public var date: LocalDate
    public var progressCount: Int
    /// The habit's goal on that day (a later goal change does not rewrite history).
    public var goalCount: Int
    public var timestamps: [Date]
    /// 1–5.
    public var difficulty: Int?
    public var skipReason: SkipReason?
    public var skipNote: String?

    public init(
        habitId: UUID, date: LocalDate, progressCount: Int, goalCount: Int, timestamps: [Date] = [], difficulty: Int? = nil,
        skipReason: SkipReason? = nil, skipNote: String? = nil
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

    private enum CodingKeys: String, CodingKey { case habitId, date, progressCount, goalCount, timestamps, difficulty, skipReason, skipNote }

    /// A field the wire lets a device leave out takes the server's default here too.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        habitId = try container.decode(UUID.self, forKey: .habitId)
        date = try container.decode(LocalDate.self, forKey: .date)
        progressCount = try container.decode(Int.self, forKey: .progressCount)
        goalCount = try container.decode(Int.self, forKey: .goalCount)
        timestamps = try container.decodeIfPresent([Date].self, forKey: .timestamps) ?? []
        difficulty = try container.decodeIfPresent(Int.self, forKey: .difficulty)
        skipReason = try container.decodeIfPresent(SkipReason.self, forKey: .skipReason)
        skipNote = try container.decodeIfPresent(String.self, forKey: .skipNote)
    }
}
