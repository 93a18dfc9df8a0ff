import Foundation

/// One row of a set-based write.
struct SyncRow: Sendable {
    let id: UUID
    let version: Int64
    let updatedAt: Date
    let updatedBy: String
    let isDelete: Bool
    /// Text values of the data columns; empty for deletes (but for a tombstone that keeps the
    /// fields merged into it: `PushBatch.applyFieldMerge`).
    let values: [String?]
}
