import Foundation
import HabitSyncDomain

/// What the server's answer to a batch did to the local records, for the app to show.
public struct SettleReport: Sendable, Equatable {
    /// Another write won: the device now holds the winner (unless it was edited again since).
    public struct Conflict: Sendable, Equatable {
        public let collection: SyncCollection
        public let id: UUID
        public let winnerUpdatedAt: Date
        public let winnerUpdatedBy: String
    }

    /// An edit the server rejected: the record is now `failed` with this reason.
    public struct Rejection: Sendable, Equatable {
        public let collection: SyncCollection
        public let id: UUID
        public let failure: SyncFailure
    }

    /// A record the server keeps under another id (daily progress of a day another device
    /// already recorded): re-keyed locally.
    public struct Rekey: Sendable, Equatable {
        public let collection: SyncCollection
        public let from: UUID
        public let to: UUID
    }

    /// The server's answer for one edit the batch carried.
    public struct Outcome: Sendable, Equatable {
        public enum Status: String, Sendable { case applied, unchanged, superseded, rejected }
        public let collection: SyncCollection
        /// The id the edit was sent under, and the one the record has now (`canonicalId`).
        public let sentID: UUID
        public let id: UUID
        public let status: Status
        /// The record was edited again while the batch was out: that newer edit is pending.
        public let editedSince: Bool
    }

    public var applied = 0
    public var unchanged = 0
    public var conflicts: [Conflict] = []
    public var rejected: [Rejection] = []
    public var rekeyed: [Rekey] = []
    /// Every result, in the batch's order.
    public var outcomes: [Outcome] = []

    /// This report and `other` together (a sync settles several batches).
    mutating func add(_ other: SettleReport) {
        applied += other.applied
        unchanged += other.unchanged
        conflicts += other.conflicts
        rejected += other.rejected
        rekeyed += other.rekeyed
        outcomes += other.outcomes
    }
}
