import Foundation
import HabitSyncDomain
import LibPQClient

/// Append-only collections (xpTransactions, usageEvents).
extension PushBatch {
    /// The first write of an id is stored; the same again is unchanged; anything else is
    /// `immutable_record`. The stored rows of the ids and the inserts of those not stored go in
    /// one round trip (the inserts skip a stored id by themselves); only when some id was stored
    /// already is its content compared, in a second.
    func applyAppendOnly(_ table: SyncTable, _ changes: [PushChange]) async throws {
        let (firstInBatch, contradicting) = PushPlan.firstOfEachID(changes)
        let contradictingIndices = Set(contradicting.map(\.index))
        // Every first write of an id is offered; versions of those found stored go unused (and
        // are given back when none was inserted).
        let offered = changes.filter { firstInBatch[$0.id]?.index == $0.index && !contradictingIndices.contains($0.index) }
        let firstVersion = nextVersion
        var versions: [UUID: Int64] = [:]
        let rows = offered.map { change -> SyncRow in
            let version = allocateVersion()
            versions[change.id] = version
            return SyncRow(id: change.id, version: version, updatedAt: change.updatedAt, updatedBy: device, isDelete: false, values: change.record.map(table.values) ?? [])
        }
        // A usage event is looked for in the registry first (one unpartitioned index): only
        // an id it knows, seldom any, is then read from the monthly partitions, in a round trip
        // of its own. (A read of `usage_events` itself, with a generic plan, locks every
        // partition and its indexes before it prunes them: 244 locks for five years of months.)
        let isUsage = table.collection == .usageEvents
        let existing: [UUID: StoredRow], inserted: Set<UUID>
        if isUsage && !rows.isEmpty, let known = registeredUsageEvents {
            // The prologue read which ids the registry knows (one node, fast path only): the
            // others are registered and inserted with the closing statements, unread; only
            // known ids (seldom any) are read.
            let new = rows.filter { !known.contains($0.id) }
            if !new.isEmpty {
                try await writeLater([SyncTableSQL.registerAndAppendUsageEvents(table, tenant: tenant, user: user, rows: new, knownNew: true)])
            }
            inserted = Set(new.map(\.id))
            let stored = Set(changes.map(\.id)).intersection(known)
            existing = stored.isEmpty ? [:] : try await storedRows(table.collection, ids: Array(stored))
        } else if isUsage && singleNode && !rows.isEmpty {
            // On one node the registration is the lookup: one statement registers and inserts
            // the ids the registry did not know; only the ids it knew (seldom any) are read.
            let result = try await connection.query(SyncTableSQL.registerAndAppendUsageEvents(table, tenant: tenant, user: user, rows: rows))
            inserted = Set(try result.rows.map { try $0.decode("id", as: UUID.self) })
            let known = Set(changes.map(\.id)).subtracting(inserted)
            existing = known.isEmpty ? [:] : try await storedRows(table.collection, ids: Array(known))
        } else {
            (existing, inserted) = try await lookUpThenAppend(table, changes, rows: rows)
        }
        if inserted.isEmpty { nextVersion = firstVersion }
        let storedChanges = changes.filter { existing[$0.id] != nil }
        let same = try await storedAsSent(table, storedChanges.map { ($0, $0.id) })
        for change in changes {
            if let row = existing[change.id] {
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
            }
        }
        let toInsert = offered.filter { existing[$0.id] == nil }
        guard !toInsert.isEmpty else { return }
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
                record(result, collection: change.collection)
            } else if let version = versions[change.id] {
                if firstInBatch[change.id]?.index == change.index {
                    applied(change, version: version)
                } else {
                    var result = ChangeResult(index: change.index, id: change.id.uuidString.lowercased(), status: .unchanged, serverVersion: version)
                    result.clamped = change.clamped
                    record(result, collection: change.collection)
                }
            }
        }
    }

    /// The stored rows of `changes`' ids, then the rows not stored yet inserted: for xp in one
    /// round trip (the insert skips a stored id by itself); for usage events on Citus, the
    /// registry probed and the new ids registered, then inserted (`registerThenAppend`).
    private func lookUpThenAppend(_ table: SyncTable, _ changes: [PushChange], rows: [SyncRow]) async throws -> ([UUID: StoredRow], Set<UUID>) {
        let isUsage = table.collection == .usageEvents
        var queries = [
            isUsage
                ? SyncTableSQL.registered(tenant: tenant, user: user, ids: changes.map(\.id))
                : SyncTableSQL.current(table.collection, tenant: tenant, user: user, ids: changes.map(\.id))
        ]
        if !rows.isEmpty && !isUsage { queries.append(SyncTableSQL.appendOnly(table, tenant: tenant, user: user, rows: rows)) }
        let read = try await connection.pipeline(queries)
        guard read.count == queries.count, let lookup = read.first, let last = read.last else {
            throw PGError(kind: .client, message: "the append reads returned \(read.count) results")
        }
        let existing: [UUID: StoredRow]
        if isUsage {
            let known = try lookup.rows.map { try $0.decode("id", as: UUID.self) }
            existing = known.isEmpty ? [:] : try await storedRows(table.collection, ids: known)
        } else {
            existing = try storedRows(lookup)
        }
        if queries.count > 1 { return (existing, Set(try last.rows.map { try $0.decode("id", as: UUID.self) })) }
        return (existing, isUsage && !rows.isEmpty ? try await registerThenAppend(table, rows) : [])
    }

    /// Usage events registered, then those the registry took inserted: two round trips, as
    /// Citus and the slow path (savepoints) need. Returns the ids inserted.
    private func registerThenAppend(_ table: SyncTable, _ rows: [SyncRow]) async throws -> Set<UUID> {
        let register = SyncTableSQL.registerUsageEvents(table, tenant: tenant, user: user, rows: rows)
        let registered = Set(try await connection.query(register).rows.map { try $0.decode("id", as: UUID.self) })
        let newRows = rows.filter { registered.contains($0.id) }
        guard !newRows.isEmpty else { return [] }
        let append = SyncTableSQL.appendRegistered(table, tenant: tenant, user: user, rows: newRows)
        return Set(try await connection.query(append).rows.map { try $0.decode("id", as: UUID.self) })
    }
}
