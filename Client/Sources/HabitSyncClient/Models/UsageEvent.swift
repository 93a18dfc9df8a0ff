import Foundation
import HabitSyncDomain

/// A `usageEvents` record: append-only.
public struct UsageEvent: WritableModel {
    public static let collection = SyncCollection.usageEvents

    public enum Kind: String, Codable, Sendable {
        case exitToFocus = "exit_to_focus", deepenPause = "deepen_pause", proceedToApp = "proceed_to_app"
    }

    public var eventType: Kind
    public var timestamp: Date
    /// Required (not blank) for `proceedToApp`.
    public var targetAppName: String?
    public var pauseDuration: Double
    public var timerDuration: Double

    public init(eventType: Kind, timestamp: Date, targetAppName: String? = nil, pauseDuration: Double, timerDuration: Double) {
        self.eventType = eventType
        self.timestamp = timestamp
        self.targetAppName = targetAppName
        self.pauseDuration = pauseDuration
        self.timerDuration = timerDuration
    }
}
