import Foundation
import HabitSyncDomain
import LibPQClient
import Testing

@testable import HabitSyncStore

/// No field edit lost: from every push the server answered (answers the devices never got
/// included), the field writes it acknowledged (applied, unchanged or superseded; each
/// `(device, batch, index)` once), each with its key (`fieldTimes` or `updatedAt`, and the
/// device). After the final sync, per record and field:
/// - the server holds the value of the write with the greatest key: both of two edits of
///   different fields survive, and edits of one field resolve to the later one wherever they
///   arrived first;
/// - every write that lost on arrival (a write with a greater key and another value had been
///   stored before it, by the versions the answers carry) is in the conflict log under its
///   field, device and time;
/// - deletes count: a deleted record's fields are checked as a live one's (a tombstone keeps
///   the fields merged into it, which a later edit brings back), and a habit or selected app is
///   deleted exactly when the acknowledged write with the greatest key was a delete (a delete
///   wins at an equal key). Reminders are left out of that: a habit's delete tombstones them
///   as the server.
/// - a record whose tombstone maintenance purged is checked against the writes answered after
///   its last purge only (`PurgedRecords`): past the purge horizon an older write brings a
///   record back and a delete sent again finds nothing to keep, as documented.
///
/// Fields a clamped change touched (a device clock too far ahead: the server's clock replaced
/// its time) are left out, since their key is the server's.
struct FieldCheck {
    struct Target: Hashable { let collection: String; let id: String; let field: String }
    struct Write {
        let key: LWWKey
        let value: String
        /// The version the write was applied at; nil when it was not applied.
        let appliedAt: Int64?
        /// The record's version in the answer: no later than this, everything before it was stored.
        let answeredVersion: Int64
    }

    /// Checked fields: simple values whose wire form the SDK sends as the server renders them.
    static let fields: [String: [String]] = [
        "habits": ["name", "goalCount", "icon"], "reminders": ["time", "isActive"], "selectedApps": ["orderIndex"],
        "userSettings": ["gatewayTimerDuration", "timezone"],
    ]

    private(set) var writes: [Target: [Write]] = [:]
    private(set) var clamped: Set<Target> = []

    /// A record whose deletion is checked, and every acknowledged write to it: its key and
    /// whether it was a delete.
    struct Record: Hashable { let collection: String; let id: String }
    static let deletable: Set<String> = ["habits", "selectedApps"]
    private(set) var recordWrites: [Record: [(key: LWWKey, isDelete: Bool, version: Int64)]] = [:]
    private(set) var clampedRecords: Set<Record> = []

    init(_ pushes: [FaultInjectingTransport.AnsweredPush], devices: Set<String>) {
        var seen: Set<String> = []
        for push in pushes where devices.contains(push.device) {
            guard case .object(let body)? = try? JSONParser.parse(push.body), case .object(let answer)? = try? JSONParser.parse(push.response),
                case .string(let batch)? = body["batchId"], case .array(let changes)? = body["changes"],
                case .array(let results)? = answer["results"]
            else { continue }
            for case .object(let result) in results {
                guard case .number(let position)? = result["index"], let index = Int(exactly: position), index < changes.count,
                    case .object(let change) = changes[index], case .string(let collection)? = change["collection"],
                    let checked = Self.fields[collection],
                    case .string(let status)? = result["status"], ["applied", "unchanged", "superseded"].contains(status),
                    case .number(let version)? = result["serverVersion"],
                    case .string(let idText)? = change["id"], case .string(let updatedText)? = change["updatedAt"],
                    let updatedAt = WireTime.parse(updatedText), seen.insert("\(push.device)|\(batch)|\(index)").inserted
                else { continue }
                let id = collection == "userSettings" ? "settings" : idText.lowercased()
                if Self.deletable.contains(collection) {
                    let target = Record(collection: collection, id: id)
                    if result["clamped"] == .bool(true) { clampedRecords.insert(target) }
                    let isDelete = change["op"] == .string("delete")
                    // A record the server keeps under another id (never, for these two) is left out.
                    if result["canonicalId"] == nil {
                        recordWrites[target, default: []].append((LWWKey(updatedAt: updatedAt, deviceID: push.device), isDelete, Int64(version)))
                    }
                }
                guard case .object(let record)? = change["record"] else { continue }
                var times: [String: JSONValue] = [:]
                if case .object(let sent)? = change["fieldTimes"] { times = sent }
                for field in checked {
                    guard let value = record[field] else { continue }
                    let target = Target(collection: collection, id: id, field: field)
                    if result["clamped"] == .bool(true) { clamped.insert(target); continue }
                    var at = updatedAt
                    if case .string(let text)? = times[field], let time = WireTime.parse(text) { at = time }
                    writes[target, default: []].append(
                        Write(
                            key: LWWKey(updatedAt: at, deviceID: push.device), value: value.jsonText,
                            appliedAt: status == "applied" ? Int64(version) : nil, answeredVersion: Int64(version)))
                }
            }
        }
    }

    /// Checks the user's live records and conflict log; returns how many fields were compared
    /// and how many lost writes were found logged.
    func check(_ connection: PGConnection, tenant: UUID, user: String, purged: PurgedRecords) async throws -> (fields: Int, logged: Int) {
        var stored: [String: [String: JSONValue]] = [:]  // "collection/id" → record, tombstones too
        var deleted: [Record: Bool] = [:]
        for collection in Self.fields.keys.sorted() {
            guard let kind = SyncCollection(rawValue: collection) else { continue }
            let table = PGFragment.identifier(kind.table)
            let rows = try await connection.query(
                """
                SELECT h.id::text AS id, h.deleted_at IS NOT NULL AS deleted, \(WireChangeSQL.record(kind, alias: "h")) AS record FROM \(table) h
                WHERE h.tenant_id = \(tenant) AND h.user_id = \(user)
                """
            ).rows
            for row in rows {
                let id = collection == "userSettings" ? "settings" : try row.decode("id", as: String.self)
                deleted[Record(collection: collection, id: id)] = try row.decode("deleted", as: Bool.self)
                if case .object(let record)? = try? JSONParser.parse(bytes: Array(try row.decode("record", as: String.self).utf8)) {
                    stored["\(collection)/\(id)"] = record
                }
            }
        }
        // What the server answered after the record's last purge (all of it, if never purged).
        func sincePurge(_ collection: String, _ id: String) -> Int64 { purged.purgedAt(user: user, collection: collection, id: id) ?? Int64.min }
        for (target, allWrites) in recordWrites where !clampedRecords.contains(target) {
            let writes = allWrites.filter { $0.version > sincePurge(target.collection, target.id) }
            // The greatest key wins; at an equal key a delete does.
            guard let winner = writes.max(by: { $0.key < $1.key || ($0.key == $1.key && !$0.isDelete && $1.isDelete) }), let isDeleted = deleted[target] else { continue }
            #expect(
                isDeleted == winner.isDelete,
                "\(user): \(target.collection) \(target.id) is \(isDeleted ? "deleted" : "live") on the server; the acknowledged write with the greatest key (\(winner.key.deviceID) at \(WireTime.format(winner.key.updatedAt))) was \(winner.isDelete ? "a delete" : "an upsert")"
            )
        }
        var logged: Set<String> = []
        for row in try await connection.query(
            """
            SELECT collection, record_id, field, incoming_updated_by AS device, (extract(epoch FROM incoming_updated_at) * 1000)::int8 AS at
            FROM conflict_log WHERE tenant_id = \(tenant) AND user_id = \(user) AND outcome = 'superseded'
            """
        ).rows {
            let collection: String = try row.decode("collection")
            let id = collection == "userSettings" ? "settings" : try row.decode("record_id", as: String.self)
            // A change a delete beat is logged whole: it stands for each of its fields.
            let fields = try row.decodeIfPresent("field", as: String.self).map { [$0] } ?? Self.fields[collection] ?? []
            for field in fields {
                logged.insert("\(collection)/\(id)/\(field)/\(try row.decode("device", as: String.self))/\(try row.decode("at", as: Int64.self))")
            }
        }
        var compared = 0, foundLogged = 0
        for (target, writes) in writes where !clamped.contains(target) {
            let purgedAt = sincePurge(target.collection, target.id)
            guard let record = stored["\(target.collection)/\(target.id)"],
                let winner = writes.filter({ $0.answeredVersion > purgedAt }).max(by: { $0.key < $1.key })
            else { continue }
            if record[target.field]?.jsonText != winner.value {
                Issue.record(
                    """
                    \(user): \(target.collection) \(target.id).\(target.field) is \(record[target.field]?.jsonText ?? "absent") on the server; the latest acknowledged write (\(winner.key.deviceID) at \(WireTime.format(winner.key.updatedAt))) set \(winner.value)
                      purged at counter \(purgedAt == Int64.min ? "never" : String(purgedAt)); \(try await Self.explain(connection, target, tenant: tenant, user: user, writes: writes, recordWrites: recordWrites[Record(collection: target.collection, id: target.id)] ?? []))
                    """)
            }
            compared += 1
            for write in writes where write.key < winner.key {
                // Lost on arrival: a later write of another value was stored before it was settled.
                let beatenOnArrival = writes.contains { other in
                    guard write.key < other.key, other.value != write.value, let otherVersion = other.appliedAt else { return false }
                    return write.appliedAt.map { otherVersion < $0 } ?? (otherVersion <= write.answeredVersion)
                }
                guard beatenOnArrival else { continue }
                let entry = "\(target.collection)/\(target.id)/\(target.field)/\(write.key.deviceID)/\(write.key.updatedAtMilliseconds)"
                #expect(logged.contains(entry), "\(user): the lost write \(entry) = \(write.value) is not in the conflict log")
                foundLogged += 1
            }
        }
        return (compared, foundLogged)
    }

    /// For a failure: the server's row, the user's purge horizon and every acknowledged write.
    static func explain(
        _ connection: PGConnection, _ target: Target, tenant: UUID, user: String, writes: [Write],
        recordWrites: [(key: LWWKey, isDelete: Bool, version: Int64)]
    ) async throws -> String {
        guard let kind = SyncCollection(rawValue: target.collection) else { return "" }
        let row = try await ConvergenceRun.serverRow(connection, kind, tenant: tenant, user: user, id: target.id)
        let owner = try await ConvergenceRun.owner(connection, tenant: tenant, user: user)
        let described = writes.sorted { $0.key < $1.key }.map {
            "\($0.key.deviceID)@\(WireTime.format($0.key.updatedAt)) \($0.value) applied \($0.appliedAt.map(String.init) ?? "no") answered v\($0.answeredVersion)"
        }
        let deletes = recordWrites.sorted { $0.version < $1.version }.map {
            "\($0.isDelete ? "delete" : "upsert") \($0.key.deviceID)@\(WireTime.format($0.key.updatedAt)) v\($0.version)"
        }
        return """
            server row: \(row)
              user: \(owner)
              field writes: \(described.joined(separator: "; "))
              record writes: \(deletes.isEmpty ? "not tracked" : deletes.joined(separator: "; "))
            """
    }
}
