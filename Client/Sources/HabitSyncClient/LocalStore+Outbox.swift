import Foundation
import GRDB
import HabitSyncDomain

/// The outbox's side of a push: building the next batch, and settling the server's answer.
extension LocalStore {
    /// The batch to send: the one persisted earlier and not answered yet, byte for byte; else
    /// a new one of the `maximumChanges` oldest outbox entries, persisted before it is
    /// returned. Nil when nothing waits.
    public func nextBatch(maximumChanges: Int = 500) throws -> OutgoingBatch? {
        try database.write { db in
            if let row = try Row.fetchOne(db, sql: "SELECT batch_id, body FROM pending_batch") {
                let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM pending_batch_entries") ?? 0
                guard let id = UUID(uuidString: row["batch_id"]) else { throw LocalStoreError.corruptRow }
                return OutgoingBatch(batchID: id, body: row["body"], changeCount: count)
            }
            let entries = try Row.fetchAll(
                db,
                sql: """
                    SELECT o.collection, o.id, o.sequence, r.record, r.updated_at_ms, r.pending_increment, r.pending_fields
                    FROM outbox o JOIN records r ON r.collection = o.collection AND r.id = o.id
                    ORDER BY o.sequence LIMIT ?
                    """, arguments: [maximumChanges])
            guard !entries.isEmpty else { return nil }
            let batchID = UUID()
            var changes: [JSONValue] = []
            var carriesIncrements = false, carriesFields = false
            for entry in entries {
                let recordText: String? = entry["record"]
                var change: [String: JSONValue] = [
                    "collection": .string(entry["collection"]), "id": .string(entry["id"]),
                    "op": .string(recordText == nil ? "delete" : "upsert"),
                    "updatedAt": .string(WireTime.format(Date(timeIntervalSince1970: Double(entry["updated_at_ms"] as Int64) / 1000))),
                ]
                if let recordText { change["record"] = try JSONParser.parse(bytes: Array(recordText.utf8)) }
                if recordText != nil, let fieldsText = entry["pending_fields"] as String?, case .object(let record)? = change["record"] {
                    // Only the fields changed, each with its time when earlier than the change's.
                    guard case .object(let times) = try JSONParser.parse(bytes: Array(fieldsText.utf8)) else { throw LocalStoreError.corruptRow }
                    let updatedAt = entry["updated_at_ms"] as Int64
                    change["record"] = .object(Dictionary(uniqueKeysWithValues: times.keys.map { ($0, record[$0] ?? .null) }))
                    let earlier = times.compactMapValues { value -> JSONValue? in
                        guard case .number(let ms) = value, let milliseconds = Int64(exactly: ms), milliseconds < updatedAt else { return nil }
                        return .string(WireTime.format(Date(timeIntervalSince1970: Double(milliseconds) / 1000)))
                    }
                    if !earlier.isEmpty { change["fieldTimes"] = .object(earlier) }
                    carriesFields = true
                }
                if recordText != nil, let increment = entry["pending_increment"] as Int? {
                    change["increment"] = .number(Double(increment))
                    carriesIncrements = true
                }
                changes.append(.object(change))
            }
            var envelope: [String: JSONValue] = ["batchId": .string(Self.key(batchID)), "changes": .array(changes)]
            // Protocol 2 only when needed: a batch of whole records is the same for every server.
            if carriesIncrements || carriesFields { envelope["protocolVersion"] = .number(2) }
            // The timeline this device last synced in: a server that has since been restored,
            // or an account that started over, says so instead of applying the batch.
            if let epoch = try LocalSchema.state(db, "sync_epoch") { envelope["epoch"] = .string(epoch) }
            let body = Data(JSONValue.object(envelope).jsonText.utf8)
            try db.execute(sql: "INSERT INTO pending_batch (batch_id, body) VALUES (?, ?)", arguments: [Self.key(batchID), body])
            for (position, entry) in entries.enumerated() {
                try db.execute(
                    sql: "INSERT INTO pending_batch_entries (batch_id, position, collection, id, sequence) VALUES (?, ?, ?, ?, ?)",
                    arguments: [Self.key(batchID), position, entry["collection"], entry["id"], entry["sequence"]])
            }
            // The batch carries the increments now; what the user adds meanwhile counts from 0.
            if carriesIncrements { try db.execute(sql: LocalSchema.resetIncrementsInBatch, arguments: [Self.key(batchID)]) }
            try db.execute(sql: LocalSchema.resetFieldsInBatch, arguments: [Self.key(batchID)])
            return OutgoingBatch(batchID: batchID, body: body, changeCount: entries.count)
        }
    }

    /// Applies the server's `200` answer to `batch`: applied and unchanged records become
    /// synced, superseded ones take the winner, rejected ones become failed (and leave the
    /// outbox: they are not retried until edited again). A record edited again while its batch
    /// was out keeps its newer edit pending. Then the batch is forgotten.
    public func settle(_ batch: OutgoingBatch, responseBody: Data) throws -> SettleReport {
        guard case .object(let response) = try JSONParser.parse(responseBody),
            case .array(let results)? = response["results"]
        else { throw SyncProtocolError.malformedResponse }
        let syncedAt = WireTime.milliseconds(now())
        return try database.write { db in
            var report = SettleReport()
            if case .string(let epoch)? = response["epoch"] { try Self.noteEpoch(db, epoch) }
            let rows = try Row.fetchAll(
                db, sql: "SELECT position, collection, id, sequence FROM pending_batch_entries WHERE batch_id = ?",
                arguments: [Self.key(batch.batchID)])
            let entries = Dictionary(rows.map { (($0["position"] as Int), $0) }, uniquingKeysWith: { first, _ in first })
            for case .object(let result) in results {
                guard case .number(let position)? = result["index"], let index = Int(exactly: position), let entry = entries[index],
                    let collection = SyncCollection(rawValue: entry["collection"]), let sentID = UUID(uuidString: entry["id"]),
                    case .string(let status)? = result["status"]
                else { throw SyncProtocolError.malformedResponse }
                var id = sentID
                if case .string(let canonicalText)? = result["canonicalId"], let canonical = UUID(uuidString: canonicalText), canonical != sentID {
                    try Self.rekey(db, collection, from: sentID, to: canonical)
                    report.rekeyed.append(.init(collection: collection, from: sentID, to: canonical))
                    id = canonical
                }
                let outboxSequence = try Int64.fetchOne(
                    db, sql: "SELECT sequence FROM outbox WHERE collection = ? AND id = ?",
                    arguments: [collection.rawValue, Self.key(id)])
                let editedSince = outboxSequence != (entry["sequence"] as Int64)
                var serverVersion: Int64?
                if case .number(let version)? = result["serverVersion"] { serverVersion = Int64(exactly: version) }
                guard let outcome = SettleReport.Outcome.Status(rawValue: status) else { throw SyncProtocolError.malformedResponse }
                report.outcomes.append(.init(collection: collection, sentID: sentID, id: id, status: outcome, editedSince: editedSince))
                switch status {
                case "applied", "unchanged":
                    status == "applied" ? (report.applied += 1) : (report.unchanged += 1)
                    try db.execute(
                        sql: """
                            UPDATE records SET server_version = coalesce(?, server_version), last_synced_at_ms = ?,
                                sync_status = CASE WHEN ? THEN sync_status ELSE 'synced' END,
                                pending_increment = CASE WHEN ? THEN pending_increment END,
                                pending_fields = CASE WHEN ? THEN pending_fields END
                            WHERE collection = ? AND id = ?
                            """, arguments: [serverVersion, syncedAt, editedSince, editedSince, editedSince, collection.rawValue, Self.key(id)])
                case "superseded":
                    guard case .object(let current)? = result["current"], let winner = ServerChange(current) else { throw SyncProtocolError.malformedResponse }
                    report.conflicts.append(.init(collection: collection, id: id, winnerUpdatedAt: winner.updatedAt, winnerUpdatedBy: winner.updatedBy))
                    try LocalSchema.noteSeen(db, winner.updatedAt)
                    if !editedSince { try Self.adopt(db, winner, syncedAt: syncedAt) }
                case "rejected":
                    var code = "invalid_field", field: String?, message = ""
                    if case .object(let error)? = result["error"] {
                        if case .string(let text)? = error["code"] { code = text }
                        if case .string(let text)? = error["field"] { field = text }
                        if case .string(let text)? = error["message"] { message = text }
                    }
                    let failure = SyncFailure(code: code, field: field, message: message)
                    report.rejected.append(.init(collection: collection, id: id, failure: failure))
                    if !editedSince {
                        try db.execute(
                            sql: """
                                UPDATE records SET sync_status = 'failed', failure_code = ?, failure_field = ?, failure_message = ?, pending_increment = NULL, pending_fields = NULL
                                WHERE collection = ? AND id = ?
                                """, arguments: [code, field, message, collection.rawValue, Self.key(id)])
                    }
                default:
                    throw SyncProtocolError.malformedResponse
                }
                if !editedSince {
                    try db.execute(sql: "DELETE FROM outbox WHERE collection = ? AND id = ?", arguments: [collection.rawValue, Self.key(id)])
                }
            }
            try db.execute(sql: "DELETE FROM pending_batch WHERE batch_id = ?", arguments: [Self.key(batch.batchID)])
            return report
        }
    }

    /// Stores a change from the server as the synced state of its record.
    static func adopt(_ db: Database, _ change: ServerChange, syncedAt: Int64) throws {
        try db.execute(
            sql: """
                INSERT INTO records (collection, id, record, updated_at_ms, updated_by, sync_status, last_synced_at_ms, server_version)
                VALUES (?, ?, ?, ?, ?, 'synced', ?, ?)
                ON CONFLICT (collection, id) DO UPDATE SET record = excluded.record, updated_at_ms = excluded.updated_at_ms,
                    updated_by = excluded.updated_by, sync_status = 'synced', last_synced_at_ms = excluded.last_synced_at_ms,
                    server_version = excluded.server_version, failure_code = NULL, failure_field = NULL, failure_message = NULL,
                    awaiting_resync = 0, pending_increment = NULL, pending_fields = NULL
                """,
            arguments: [
                change.collection.rawValue, key(change.id), change.recordJSON, WireTime.milliseconds(change.updatedAt),
                change.updatedBy, syncedAt, change.serverVersion,
            ])
    }

    /// Moves a record (and its outbox entry) to the id the server keeps it under, replacing
    /// what the device held there.
    static func rekey(_ db: Database, _ collection: SyncCollection, from: UUID, to: UUID) throws {
        for table in ["records", "outbox"] {
            try db.execute(
                sql: "DELETE FROM \(table) WHERE collection = ? AND id = ? AND EXISTS (SELECT 1 FROM \(table) WHERE collection = ? AND id = ?)",
                arguments: [collection.rawValue, key(to), collection.rawValue, key(from)])
            try db.execute(sql: "UPDATE \(table) SET id = ? WHERE collection = ? AND id = ?", arguments: [key(to), collection.rawValue, key(from)])
        }
    }
}
