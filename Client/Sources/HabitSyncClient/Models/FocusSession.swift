import Foundation
import HabitSyncDomain

/// A `focusSessions` record: `completed` and `abandoned` are final, and at most one session
/// per user is active or paused (the server abandons the one that started earlier).
public struct FocusSession: DeletableModel {
    public static let collection = SyncCollection.focusSessions

    public enum State: String, Codable, Sendable { case active, paused, completed, abandoned }

    public var startTime: Date
    /// Nil exactly while the session is active or paused.
    public var endTime: Date?
    public var state: State
    /// Seconds, 0–1500.
    public var duration: Double
    public var pausedDuration: Double
    /// Nil: `startTime`.
    public var createdAt: Date?

    public init(startTime: Date, endTime: Date? = nil, state: State = .active, duration: Double, pausedDuration: Double = 0, createdAt: Date? = nil) {
        self.startTime = startTime
        self.endTime = endTime
        self.state = state
        self.duration = duration
        self.pausedDuration = pausedDuration
        self.createdAt = createdAt
    }

    private enum CodingKeys: String, CodingKey { case startTime, endTime, state, duration, pausedDuration, createdAt }

    /// A field the wire lets a device leave out takes the server's default here too.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        startTime = try container.decode(Date.self, forKey: .startTime)
        endTime = try container.decodeIfPresent(Date.self, forKey: .endTime)
        state = try container.decode(State.self, forKey: .state)
        duration = try container.decode(Double.self, forKey: .duration)
        pausedDuration = try container.decodeIfPresent(Double.self, forKey: .pausedDuration) ?? 0
        createdAt = try container.decodeIfPresent(Date.self, forKey: .createdAt)
    }
}
