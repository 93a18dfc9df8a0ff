import Foundation
import HabitSyncDomain

/// A model as the store holds it: its id, its value, and its sync status fields.
public struct Stored<Model: SyncModel>: Sendable, Equatable {
    public let id: UUID
    public let value: Model
    /// The row behind it: `syncStatus`, `lastSyncedAt`, `serverVersion`, `updatedAt`,
    /// `updatedBy`, `failure`.
    public let record: LocalRecord

    public var syncStatus: SyncStatus { record.syncStatus }
    public var failure: SyncFailure? { record.failure }

    init?(_ record: LocalRecord) throws {
        guard let json = record.recordJSON else { return nil }
        id = record.id
        value = try ModelCoding.model(Model.self, json: json)
        self.record = record
    }
}
