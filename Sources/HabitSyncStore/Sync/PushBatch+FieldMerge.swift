import Foundation
import HabitSyncDomain
import LibPQClient

/// Habits, reminders, selected apps, user settings and achievements merge field by field
/// (`FieldMergedRecord`): the stored records of the batch's targets are read once (with each
/// field's key), the batch settled in Swift (`FieldMergedBatch`), and the records that changed
/// written with one statement. The push holds the user's lock, under which they were read.
extension PushBatch {
    /// One field write that lost, for the conflict log.
    struct FieldLoss {
        let index: Int
        let collection: SyncCollection
        let recordID: UUID
        let loss: FieldMerge.Loss
    }

    /// `field_times` of a tombstone no field was ever written to (a delete of a record the server
    /// had not seen): its columns are NULL, and are read as no fields at all rather than as
    /// fields set to null at the delete's key, which would beat every older write.
    static let noFieldsWritten = "{}"

    /// The stored rows of `keys` (every row of the user for `keyedByUser`): their data columns
    /// (`StoredFieldsSQL`; tombstones too: a record brought back keeps the fields it had), the
    /// record's key and the keys of the fields set before it. One index probe per key.
    static func fieldMergedRows(
        _ table: SyncTable, tenant: UUID, user: String, keys: [FieldMergedBatch.RecordKey], by target: FieldMergedBatch.Target
    ) -> PGQuery {
        // An achievement's key, as stored; the others' keys are the id and the user.
        let key: PGFragment = target == .achievementID ? "h.achievement_id" : "NULL::text"
        let columns: PGFragment = """
            h.id, \(key) AS record_key, h.updated_at, h.updated_by, h.deleted_at IS NOT NULL AS deleted, h.server_version, \
            coalesce(h.field_times = '{}'::jsonb, false) AS no_fields, h.field_times::text AS field_times, \
            \(StoredFieldsSQL.columns(table, alias: "h"))
            """
        let table = table.table
        switch target {
        case .user:
            return "SELECT \(columns) FROM \(table) h WHERE h.tenant_id = \(tenant) AND h.user_id = \(user)"
        case .id:
            return """
                SELECT p.* FROM unnest(\(keys.compactMap { if case .id(let id) = $0 { id } else { nil } })::uuid[]) AS k(id)
                CROSS JOIN LATERAL (SELECT \(columns) FROM \(table) h WHERE h.tenant_id = \(tenant) AND h.user_id = \(user) AND h.id = k.id OFFSET 0) p
                """
        case .achievementID:
            return """
                SELECT p.* FROM unnest(\(keys.compactMap { if case .achievementID(let id) = $0 { id.text } else { nil } })::text[]) AS k(id)
                CROSS JOIN LATERAL (SELECT \(columns) FROM \(table) h WHERE h.tenant_id = \(tenant) AND h.user_id = \(user) AND h.achievement_id = k.id OFFSET 0) p
                """
        }
    }

    /// Writes the settled records: every data column (a tombstone keeps its data), the record's
    /// key, its new version and the keys of its older fields. Unconditional, under the user's lock.
    /// Two statements for one pipeline, the update of the stored records, then the insert of the
    /// others (`SyncTableSQL`: Citus sends neither to more than the user's worker).
    static func writeFieldMerged(_ table: SyncTable, tenant: UUID, user: String, rows: [SyncRow], fieldTimes: [String?], keyedByUser: Bool) -> [PGQuery] {
        let match: PGFragment = keyedByUser ? "" : " AND h.id = i.id"
        let rowsWithTimes: PGQuery = """
            SELECT i.*, f.field_times::jsonb AS field_times FROM (\(SyncTableSQL.input(table, rows))) i
            JOIN unnest(\(rows.map(\.id))::uuid[], \(fieldTimes)::text[]) AS f(id, field_times) ON f.id = i.id
            """
        // On Citus the `WITH` of the update goes to the user's worker as a result of its own:
        // the casts in it may not be inside the `CASE` of a distributed `UPDATE`.
        let update: PGQuery = """
            WITH input AS (\(rowsWithTimes))
            UPDATE \(table.table) h SET \(SyncTableSQL.dataAssignments(table)),
                updated_at = i.updated_at, updated_by = i.updated_by, server_version = i.version, synced_at = i.now,
                deleted_at = CASE WHEN i.is_delete THEN coalesce(h.deleted_at, i.now) END, field_times = i.field_times
            FROM input i
            WHERE h.tenant_id = \(tenant) AND h.user_id = \(user)\(match)
            RETURNING i.id
            """
        let insert: PGQuery = """
            WITH input AS (\(rowsWithTimes))
            INSERT INTO \(table.table) AS w (tenant_id, user_id, id, \(SyncTableSQL.columnList(table)), updated_at, updated_by, server_version, synced_at,
                                            deleted_at, field_times)
            SELECT owner.tenant_id, owner.user_id, i.id, \(SyncTableSQL.insertValues(table)), i.updated_at, i.updated_by, i.version, i.now,
                   CASE WHEN i.is_delete THEN i.now END, i.field_times
            FROM input i CROSS JOIN \(OwnerRow.relation(tenant: tenant, user: user))
            WHERE NOT EXISTS (SELECT 1 FROM \(table.table) h WHERE h.tenant_id = \(tenant) AND h.user_id = \(user)\(match) OFFSET 0)
            RETURNING w.id
            """
        return [update, insert]
    }

    /// Settles `changes` of `table` field by field (`FieldMergedBatch`) and writes the records
    /// that changed.
    func applyFieldMerge(_ table: SyncTable, _ changes: [PushChange], by targetKind: FieldMergedBatch.Target = .id) async throws {
        guard !changes.isEmpty else { return }
        let collection = table.collection
        let targets = FieldMergedBatch.targets(of: changes, by: targetKind)
        var stored: [FieldMergedBatch.RecordKey: FieldMergedBatch.StoredRecord] = [:]
        for row in try await connection.query(Self.fieldMergedRows(table, tenant: tenant, user: user, keys: targets, by: targetKind)).rows {
            let key = LWWKey(updatedAt: try row.decode("updated_at"), deviceID: try row.decode("updated_by"))
            let fields = try row.decode("no_fields", as: Bool.self) ? nil : try StoredFieldsSQL.wireFields(table, row)
            let record = Self.storedFields(fields, fieldTimes: try row.decodeIfPresent("field_times"), key: key)
            let id: UUID = try row.decode("id")
            let target: FieldMergedBatch.RecordKey =
                switch targetKind {
                case .id: .id(id)
                case .user: .user
                case .achievementID: .achievementID(ExactText(try row.decode("record_key", as: String.self)))
                }
            stored[target] = FieldMergedBatch.StoredRecord(
                id: id, serverVersion: try row.decode("server_version"),
                record: FieldMergedRecord(fields: record, key: key, deleted: try row.decode("deleted")))
        }
        let liveHabits = collection == .reminders ? try await liveHabitsReferenced(by: changes, stored: stored.values.map(\.record)) : []
        let batch = FieldMergedBatch(
            collection, changes: changes, by: targetKind, stored: stored, device: device, userRecordID: derivedRecordID, liveHabits: liveHabits,
            context: context, firstVersion: nextVersion)
        nextVersion = batch.nextVersion
        if !batch.writes.isEmpty {
            let rows = batch.writes.map { write in
                SyncRow(
                    id: write.id, version: write.version, updatedAt: write.record.key.updatedAt, updatedBy: write.record.key.deviceID,
                    isDelete: write.record.deleted, values: write.validated.map(table.values) ?? [])
            }
            let fieldTimes = batch.writes.map { Self.fieldTimesJSON($0.record) }
            _ = try await connection.pipeline(Self.writeFieldMerged(table, tenant: tenant, user: user, rows: rows, fieldTimes: fieldTimes, keyedByUser: targetKind == .user))
            try await afterFieldMergedWrites(collection, rows)
        }

        // Superseded changes return the record as it stands now.
        let supersededTargets = batch.settlements.filter { $0.value.outcomes.values.contains(.superseded) }.map(\.key)
        let current = supersededTargets.isEmpty ? [:] : try await storedRows(collection, ids: supersededTargets.compactMap { batch.recordIDs[$0] })
        for change in changes {
            let key = FieldMergedBatch.target(of: change, by: targetKind)
            let canonical = batch.recordIDs[key] ?? change.id
            switch batch.settlements[key]?.outcomes[change.index] {
            case .applied?:
                if let version = batch.version(of: key) {
                    applied(change, version: version, canonical: canonical)
                } else {
                    reject(change.index, ChangeRejection(.invalidField, "the record could not be stored"))
                }
            case .unchanged?:
                unchanged(change, version: batch.version(of: key) ?? stored[key]?.serverVersion, canonical: canonical)
            case .superseded?:
                if let row = current[canonical] {
                    superseded(change, by: row)
                    // Lost only field by field (logged by field), or only to the same values
                    // (nothing lost): not logged whole, as a losing delete or a change a delete
                    // beat is.
                    if batch.settlements[key]?.loggedWhole.contains(change.index) == false { notLoggedWhole.insert(change.index) }
                } else {
                    reject(change.index, ChangeRejection(.invalidField, "the record could not be stored"))
                }
            case .rejected(let rejection)?:
                reject(change.index, rejection)
            case nil:
                reject(change.index, ChangeRejection(.invalidField, "the record could not be stored"))
            }
        }
        for (key, settlement) in batch.settlements where batch.version(of: key) != nil || settlement.outcomes.values.contains(.superseded) {
            guard let id = batch.recordIDs[key] else { continue }
            fieldLosses += settlement.losses.map { FieldLoss(index: $0.index, collection: collection, recordID: id, loss: $0.loss) }
        }
    }

    /// The stored record's fields, each with its key: `fieldTimes` names those older than the
    /// record's `key` (null: a default nobody set). Nil fields: a row no field was ever written
    /// to (`noFieldsWritten`), which has none (any write then sets them).
    static func storedFields(_ fields: [String: JSONValue]?, fieldTimes: String?, key: LWWKey) -> FieldMerge {
        guard let fields else { return FieldMerge() }
        var times: [String: JSONValue] = [:]
        if let fieldTimes, case .object(let parsed)? = try? JSONParser.parse(bytes: Array(fieldTimes.utf8)) { times = parsed }
        return FieldMerge(
            fields.reduce(into: [:]) { entries, field in
                var at = key
                if case .array(let pair)? = times[field.key], pair.count == 2, case .string(let time) = pair[0], case .string(let device) = pair[1],
                    let date = WireTime.parse(time, years: LocalDate.recordYears)
                {
                    at = LWWKey(updatedAt: date, deviceID: device)
                } else if times[field.key] == .null {
                    at = .never
                }
                entries[field.key] = FieldMerge.Entry(value: field.value, at: at)
            })
    }

    /// `{"field": [time, device]}` for the fields whose key is older than the record's (`null`
    /// for a default nobody set); nil when there are none; `{}` when the record holds no field
    /// (`noFieldsWritten`).
    static func fieldTimesJSON(_ record: FieldMergedRecord) -> String? {
        if record.fields.fields.isEmpty { return noFieldsWritten }
        let older = record.fields.fields.filter { $0.value.at != record.key }
        guard !older.isEmpty else { return nil }
        return JSONValue.object(
            older.mapValues { entry in
                entry.at == .never ? .null : .array([.string(WireTime.format(entry.at.updatedAt)), .string(entry.at.deviceID)])
            }
        ).jsonText
    }

    /// The habits the reminders name, sent or stored, that are live (after this batch's habits).
    private func liveHabitsReferenced(by changes: [PushChange], stored: [FieldMergedRecord]) async throws -> Set<UUID> {
        var ids = Set<UUID>()
        for change in changes {
            if case .string(let text)? = change.rawRecord?["habitId"], let id = UUID(uuidString: text) { ids.insert(id) }
        }
        for record in stored {
            if case .string(let text)? = record.fields.fields["habitId"]?.value, let id = UUID(uuidString: text) { ids.insert(id) }
        }
        guard !ids.isEmpty else { return [] }
        return Set(try await connection.query(Self.liveHabits(tenant: tenant, user: user, ids: Array(ids))).rows.map { try $0.decode("id", as: UUID.self) })
    }

    /// What follows a write: a habit's delete tombstones its reminders and progress, the user's
    /// calendar follows their settings, and habits feed the derived records.
    private func afterFieldMergedWrites(_ collection: SyncCollection, _ rows: [SyncRow]) async throws {
        switch collection {
        case .habits:
            derivedInputsChanged = true
            try await cascadeHabitDeletes(rows.filter(\.isDelete).map { ($0.id, $0.updatedAt) })
        case .userSettings:
            guard let settings = rows.first else { return }
            var zone = "UTC"
            if !settings.isDelete, let index = SyncTable.userSettings.columnIndex(ofField: "timezone"),
                let value = settings.values[index]
            {
                zone = value
            }
            let moved = try await connection.query(
                """
                UPDATE users SET time_zone = \(zone) WHERE tenant_id = \(tenant) AND user_id = \(user) AND time_zone IS DISTINCT FROM \(zone) RETURNING 1 AS moved
                """)
            if !moved.rows.isEmpty { derivedInputsChanged = true }
        default:
            break
        }
    }
}
