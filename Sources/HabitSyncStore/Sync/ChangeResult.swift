import Foundation
import HabitSyncDomain

/// The outcome of one pushed change, as the push response reports it.
struct ChangeResult: Sendable {
    enum Status: String, Sendable {
        case applied, unchanged, superseded, rejected
    }

    let index: Int
    var id: String?
    var status: Status
    var serverVersion: Int64? = nil
    var canonicalId: UUID? = nil
    var clamped = false
    /// The winning change, as PostgreSQL rendered it (superseded only).
    var current: String? = nil
    var error: ChangeRejection? = nil
    /// The stored LWW key that won (superseded only), for the conflict log.
    var winningKey: (updatedAt: Date, updatedBy: String)? = nil

    var json: String {
        var fields = ["\"index\":\(index)"]
        if let id { fields.append("\"id\":" + JSONText.string(id)) }
        fields.append("\"status\":\"\(status.rawValue)\"")
        if let serverVersion { fields.append("\"serverVersion\":\(serverVersion)") }
        if let canonicalId { fields.append("\"canonicalId\":\"\(canonicalId.uuidString.lowercased())\"") }
        if clamped { fields.append("\"clamped\":true") }
        if let current { fields.append("\"current\":" + current) }
        if let error {
            var errorFields = ["\"code\":\"\(error.code.rawValue)\""]
            if let field = error.field { errorFields.append("\"field\":" + JSONText.string(field)) }
            errorFields.append("\"message\":" + JSONText.string(error.message))
            fields.append("\"error\":{" + errorFields.joined(separator: ",") + "}")
        }
        return "{" + fields.joined(separator: ",") + "}"
    }
}

/// A row's stored state after the batch's write, read back for the results.
struct StoredRow: Sendable {
    let id: UUID
    let key: String
    let updatedAt: Date
    let updatedBy: String
    let deleted: Bool
    let serverVersion: Int64
    let change: String
    /// A focus session's stored state (nil for other collections): final states stay final.
    let focusState: String?

    var lwwKey: LWWKey { LWWKey(updatedAt: updatedAt, deviceID: updatedBy) }
}
