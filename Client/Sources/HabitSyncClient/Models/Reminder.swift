import Foundation
import HabitSyncDomain

/// A `reminders` record: a time of day to remind the user of a habit.
public struct Reminder: DeletableModel {
    public static let collection = SyncCollection.reminders

    public var habitId: UUID
    /// `HH:mm`, local time of day.
    public var time: String
    public var isActive: Bool
    public var notificationIdentifier: String?

    public init(habitId: UUID, time: String, isActive: Bool = true, notificationIdentifier: String? = nil) {
        self.habitId = habitId
        self.time = time
        self.isActive = isActive
        self.notificationIdentifier = notificationIdentifier
    }

    private enum CodingKeys: String, CodingKey { case habitId, time, isActive, notificationIdentifier }

    /// A field the wire lets a device leave out takes the server's default here too.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        habitId = try container.decode(UUID.self, forKey: .habitId)
        time = try container.decode(String.self, forKey: .time)
        isActive = try container.decodeIfPresent(Bool.self, forKey: .isActive) ?? true
        notificationIdentifier = try container.decodeIfPresent(String.self, forKey: .notificationIdentifier)
    }
}
