import Foundation
import HabitSyncDomain

/// The streak of complete days across every habit. Computed by the server
/// (docs/derived-state.md): a device reads it, never writes it.
public struct GlobalStreak: DerivedModel {
    public static let collection = SyncCollection.globalStreak
    public var currentStreak: Int
    public var longestStreak: Int
    public var totalCompleteDays: Int
    public var lastCompleteDate: LocalDate?
    /// The day the figures are valid for.
    public var computedFor: LocalDate
}
