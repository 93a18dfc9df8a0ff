import Foundation
import HabitSyncDomain

/// A row's stored state after the batch's write, read back for the results.
struct StoredRow: Sendable {
    let id: UUID
    let updatedAt: Date
    let updatedBy: String
    let deleted: Bool
    let serverVersion: Int64
    let change: String
    /// A focus session's stored state (nil for other collections): final states stay final.
    let focusState: String?

    var lwwKey: LWWKey { LWWKey(updatedAt: updatedAt, deviceID: updatedBy) }
}
