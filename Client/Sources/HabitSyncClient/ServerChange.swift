import Foundation
import HabitSyncDomain

/// A change as the server renders it (a pulled change, or the `current` of a superseded
/// result): `{"collection", "op", "id", "serverVersion", "updatedAt", "updatedBy", "record"?}`.
struct ServerChange: Sendable {
    let collection: SyncCollection
    let id: UUID
    let serverVersion: Int64
    let updatedAt: Date
    let updatedBy: String
    /// The record's fields as JSON text; nil for a tombstone.
    let recordJSON: String?

    init?(_ fields: [String: JSONValue]) {
        guard case .string(let collectionName)? = fields["collection"], let collection = SyncCollection(rawValue: collectionName),
            case .string(let idText)? = fields["id"], let id = UUID(uuidString: idText),
            case .number(let number)? = fields["serverVersion"], let version = Int64(exactly: number),
            case .string(let updatedText)? = fields["updatedAt"], let updatedAt = WireTime.parse(updatedText),
            case .string(let updatedBy)? = fields["updatedBy"],
            case .string(let op)? = fields["op"]
        else { return nil }
        self.collection = collection
        self.id = id
        serverVersion = version
        self.updatedAt = updatedAt
        self.updatedBy = updatedBy
        if op == "delete" {
            recordJSON = nil
        } else if case .object(let record)? = fields["record"] {
            recordJSON = JSONValue.object(record).jsonText
        } else {
            return nil
        }
    }
}
