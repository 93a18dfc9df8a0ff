import Foundation
import HabitSyncDomain

/// Consecutive days with an `exit_to_focus` usage event. Computed by the server
/// (docs/derived-state.md): a device reads it, never writes it.
public struct UsageStreak: DerivedModel {
    public static let collection = SyncCollection.usageStreak
    public var startDate: LocalDate?
    public var currentDayCount: Int
    public var lastActivityDate: LocalDate?
    public var computedFor: LocalDate
}
