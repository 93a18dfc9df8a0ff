import Foundation
import HabitSyncDomain

/// What a stored push answers: its batch, the epoch the device syncs in from now on, and one
/// result per change in the batch's order. The store saves the answer's bytes with the push
/// (a retry gets the same bytes back), so the HTTP layer hands the store its encoding
/// (`PushStore.push(…, encode:)`) rather than the store writing JSON.
public struct PushAnswer: Sendable {
    public let batchID: UUID
    public let epoch: SyncEpoch?
    public let results: [ChangeResult]
}
