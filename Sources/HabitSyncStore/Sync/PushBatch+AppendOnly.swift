import Foundation
import HabitSyncDomain
import LibPQClient

/// Append-only collections (xpTransactions, usageEvents).
extension PushBatch {
    /// The first write of an id is stored; the same again is unchanged; anything else is
    /// `immutable_record`.
    func applyAppendOnly(_ table: SyncTable, _ changes: [PushChange]) async throws {
        // A usage event is read through the registry (`SyncTableSQL.registeredTime`): an id it
        // does not know, usually every one, costs one probe of the registry and none of the
        // monthly partitions.
        let existing = try await storedRows(table.collection, keys: changes.map(\.id))
        let storedChanges = changes.filter { existing[$0.id.uuidString.lowercased()] != nil }
        let same = try await storedAsSent(table, storedChanges.map { ($0, $0.id) })
        let (firstInBatch, contradicting) = PushPlan.firstOfEachID(changes)
        let contradictingIndices = Set(contradicting.map(\.index))
        var toInsert: [PushChange] = []
        for change in changes {
            if let row = existing[change.id.uuidString.lowercased()] {
                if same.contains(change.index) {
                    unchanged(change, version: row.serverVersion)
                } else {
                    reject(
                        change.index,
                        ChangeRejection(
                            .immutableRecord, field: "record", "\(table.collection.rawValue) \(change.id.uuidString.lowercased()) already exists with other content; append a new record instead"))
                }
            } else if contradictingIndices.contains(change.index) {
                reject(change.index, ChangeRejection(.immutableRecord, field: "record", "this batch already holds \(change.id.uuidString.lowercased()) with other content"))
            } else if firstInBatch[change.id]?.index == change.index {
                toInsert.append(change)
            }
        }
        guard !toInsert.isEmpty else { return }
        var versions: [UUID: Int64] = [:]
        let rows = toInsert.map { change -> SyncRow in
            let version = allocateVersion()
            versions[change.id] = version
            return SyncRow(id: change.id, version: version, updatedAt: change.updatedAt, updatedBy: device, isDelete: false, values: change.record.map(table.values) ?? [])
        }
        let inserted: Set<UUID>
        if table.collection == .usageEvents {
            // Two statements: Citus cannot send an `INSERT` inside a `WITH` to one worker.
            let register = SyncTableSQL.registerUsageEvents(table, tenant: tenant, user: user, rows: rows)
            let registered = Set(try await connection.query(register).rows.map { try $0.decode("id", as: UUID.self) })
            let newRows = rows.filter { registered.contains($0.id) }
            inserted =
                newRows.isEmpty
                ? []
                : Set(
                    try await connection.query(SyncTableSQL.appendRegistered(table, tenant: tenant, user: user, rows: newRows))
                        .rows.map { try $0.decode("id", as: UUID.self) })
        } else {
            inserted = Set(try await connection.query(SyncTableSQL.appendOnly(table, tenant: tenant, user: user, rows: rows)).rows.map { try $0.decode("id", as: UUID.self) })
        }
        switch table.collection {
        case .xpTransactions:
            if !inserted.isEmpty { derivedInputsChanged = true }
        case .usageEvents:
            // Only conscious exits count for the usage streak.
            if toInsert.contains(where: { change in
                guard inserted.contains(change.id), case .usageEvent(let event)? = change.record else { return false }
                return event.eventType == "exit_to_focus"
            }) {
                derivedInputsChanged = true
            }
        default:
            break
        }
        for change in changes where results[change.index] == nil {
            if !inserted.contains(change.id) {
                // Registered long ago but no longer in `usage_events`: maintenance moved its
                // month to the archive. It was stored, so this is a retry; it has no live
                // version any more, so none is reported.
                var result = ChangeResult(index: change.index, id: change.id.uuidString.lowercased(), status: .unchanged)
                result.clamped = change.clamped
                record(result, collection: change.collection.rawValue)
            } else if let version = versions[change.id] {
                if firstInBatch[change.id]?.index == change.index {
                    applied(change, version: version)
                } else {
                    var result = ChangeResult(index: change.index, id: change.id.uuidString.lowercased(), status: .unchanged, serverVersion: version)
                    result.clamped = change.clamped
                    record(result, collection: change.collection.rawValue)
                }
            }
        }
    }
}
