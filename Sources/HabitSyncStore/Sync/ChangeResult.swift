import Foundation
import HabitSyncDomain

/// The outcome of one pushed change, as the push response reports it.
struct ChangeResult: Sendable {
    let index: Int
    var id: String?
    var status: ChangeStatus
    var serverVersion: Int64? = nil
    var canonicalId: UUID? = nil
    var clamped = false
    /// The winning change, as PostgreSQL rendered it (superseded only).
    var current: String? = nil
    var error: ChangeRejection? = nil
    /// The stored LWW key that won (superseded only), for the conflict log.
    var winningKey: (updatedAt: Date, updatedBy: String)? = nil

    var json: String {
        var writer = JSONObjectWriter(reservingCapacity: 96 + (current?.utf8.count ?? 0))
        writer.add("index", index)
        if let id { writer.add("id", id) }
        writer.add("status", status.rawValue)
        if let serverVersion { writer.add("serverVersion", serverVersion) }
        if let canonicalId { writer.add("canonicalId", canonicalId.uuidString.lowercased()) }
        if clamped { writer.add("clamped", true) }
        if let current { writer.add("current", json: current) }
        if let error {
            var fields = JSONObjectWriter()
            fields.add("code", error.code.rawValue)
            if let field = error.field { fields.add("field", field) }
            fields.add("message", error.message)
            writer.add("error", json: fields.json)
        }
        return writer.json
    }
}
