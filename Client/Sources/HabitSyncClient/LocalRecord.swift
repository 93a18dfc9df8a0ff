import Foundation
import GRDB
import HabitSyncDomain

/// One record of one collection as the device holds it, with its sync status fields.
public struct LocalRecord: Sendable, Hashable {
    public let collection: SyncCollection
    public let id: UUID
    /// The record's fields as JSON text (sorted keys); nil for a tombstone.
    public let recordJSON: String?
    /// The last-writer-wins key: when, and by which device (or "server").
    public let updatedAt: Date
    public let updatedBy: String
    public let syncStatus: SyncStatus
    public let lastSyncedAt: Date?
    /// The server's version of the record as last synced; nil before the first sync.
    public let serverVersion: Int64?
    public let failure: SyncFailure?

    public var isDeleted: Bool { recordJSON == nil }

    /// The fields, parsed.
    public var fields: [String: JSONValue]? {
        guard let recordJSON, case .object(let fields)? = try? JSONParser.parse(bytes: Array(recordJSON.utf8)) else { return nil }
        return fields
    }

    init(row: Row) throws {
        guard let collection = SyncCollection(rawValue: row["collection"]), let id = UUID(uuidString: row["id"]),
            let status = SyncStatus(rawValue: row["sync_status"])
        else { throw LocalStoreError.corruptRow }
        self.collection = collection
        self.id = id
        recordJSON = row["record"]
        updatedAt = Date(timeIntervalSince1970: Double(row["updated_at_ms"] as Int64) / 1000)
        updatedBy = row["updated_by"]
        syncStatus = status
        lastSyncedAt = (row["last_synced_at_ms"] as Int64?).map { Date(timeIntervalSince1970: Double($0) / 1000) }
        serverVersion = row["server_version"]
        let code: String? = row["failure_code"]
        failure = code.map { SyncFailure(code: $0, field: row["failure_field"], message: row["failure_message"] ?? "") }
    }
}
