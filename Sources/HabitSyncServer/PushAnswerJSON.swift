import Foundation
import HabitSyncDomain
import HabitSyncStore

/// A push's answer as the device receives it (docs/protocol.md, "Push"): the store saves these
/// bytes with the push, and a retry of the batch gets them again.
public enum PushAnswerJSON {
    public static func encode(_ answer: PushAnswer) -> [UInt8] {
        let items = answer.results.map(result)
        var writer = JSONObjectWriter(reservingCapacity: items.reduce(96) { $0 + $1.utf8.count + 1 })
        writer.add("batchId", answer.batchID.uuidString.lowercased())
        if let epoch = answer.epoch { writer.add("epoch", epoch.text) }
        writer.add("results", jsonArray: items)
        return Array(writer.json.utf8)
    }

    static func result(_ result: ChangeResult) -> String {
        var writer = JSONObjectWriter(reservingCapacity: 96 + (result.current?.utf8.count ?? 0))
        writer.add("index", result.index)
        if let id = result.id { writer.add("id", id) }
        writer.add("status", result.status.rawValue)
        if let serverVersion = result.serverVersion { writer.add("serverVersion", serverVersion) }
        if let canonicalId = result.canonicalId { writer.add("canonicalId", canonicalId.uuidString.lowercased()) }
        if result.clamped { writer.add("clamped", true) }
        if let current = result.current { writer.add("current", json: current) }
        if let error = result.error {
            var fields = JSONObjectWriter()
            fields.add("code", error.code.rawValue)
            if let field = error.field { fields.add("field", field) }
            fields.add("message", error.message)
            writer.add("error", json: fields.json)
        }
        return writer.json
    }
}
