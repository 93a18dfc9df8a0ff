import Foundation
import HabitSyncDomain

/// XP and level, from the XP ledger. Computed by the server (docs/derived-state.md): a device
/// reads it, never writes it.
public struct UserProgress: DerivedModel {
    public static let collection = SyncCollection.userProgress
    public var totalXP: Int
    public var currentLevel: Int
    public var xpForCurrentLevel: Int
    public var xpForNextLevel: Int
}
