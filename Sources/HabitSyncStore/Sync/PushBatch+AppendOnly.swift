import Foundation
import HabitSyncDomain
import LibPQClient

/// Append-only collections (xpTransactions, usageEvents) and insert-once achievements.
extension PushBatch {
    /// The first write of an id is stored; the same again is unchanged; anything else is
    /// `immutable_record`.
    func applyAppendOnly(_ table: SyncTable, _ changes: [PushChange]) async throws {
        let registry = table.collection == .usageEvents
        var candidates = changes.map(\.id)
        if registry {
            // Only ids the registry knows can exist: read those back, usually none.
            candidates = try await connection.query(SyncTableSQL.registeredUsageEvents(tenant: tenant, user: user, ids: candidates))
                .rows.map { try $0.decode("id", as: UUID.self) }
        }
        let existing = candidates.isEmpty ? [:] : try await storedRows(table.collection, keys: candidates)
        let storedChanges = changes.filter { existing[$0.id.uuidString.lowercased()] != nil }
        let same = try await storedAsSent(table, storedChanges.map { ($0, $0.id) })
        let (firstInBatch, contradicting) = PushPlan.firstOfEachID(changes)
        let contradictingIndices = Set(contradicting.map(\.index))
        var toInsert: [PushChange] = []
        for change in changes {
            if let row = existing[change.id.uuidString.lowercased()] {
                if same.contains(change.index) { unchanged(change, version: row.serverVersion) } else {
                    reject(change.index, ChangeRejection(.immutableRecord, field: "record", "\(table.collection.rawValue) \(change.id.uuidString.lowercased()) already exists with other content; append a new record instead"))
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
        let insert = registry ? SyncTableSQL.appendOnlyRegistered(table, tenant: tenant, user: user, rows: rows)
                              : SyncTableSQL.appendOnly(table, tenant: tenant, user: user, rows: rows)
        let inserted = Set(try await connection.query(insert).rows.map { try $0.decode("id", as: UUID.self) })
        switch table.collection {
        case .xpTransactions:
            if !inserted.isEmpty { derivedInputsChanged = true }
        case .usageEvents:
            // Only conscious exits count for the usage streak.
            if toInsert.contains(where: { change in
                guard inserted.contains(change.id), case .usageEvent(let event)? = change.record else { return false }
                return event.eventType == "exit_to_focus"
            }) { derivedInputsChanged = true }
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

    /// One achievement per `achievementId`: the earliest `unlockedAt` wins.
    func applyInsertOnce(_ changes: [PushChange]) async throws {
        func achievementID(_ change: PushChange) -> String {
            guard case .achievement(let a)? = change.record else { return "" }
            return a.achievementId
        }
        let winners = PushPlan.earliestUnlocks(changes)
        var versions: [String: Int64] = [:]
        let rows = winners.values.sorted { $0.index < $1.index }.map { change -> SyncRow in
            let version = allocateVersion()
            versions[achievementID(change)] = version
            return SyncRow(id: change.id, version: version, updatedAt: change.updatedAt, updatedBy: device, isDelete: false, values: change.record.map(SyncTable.achievements.values) ?? [])
        }
        let written = Set(try await connection.query(SyncTableSQL.insertOnce(.achievements, tenant: tenant, user: user, rows: rows))
            .rows.map { try $0.decode("id", as: String.self) })
        let stored = try await storedRows(SyncTableSQL.current(.achievements, tenant: tenant, user: user, keys: Array(winners.keys),
                                                               by: "achievement_id", keyType: "text"))
        var notWritten: [(change: PushChange, key: UUID)] = []
        for change in changes {
            let key = achievementID(change)
            guard let row = stored[key] else { continue }
            if winners[key]?.index == change.index, written.contains(key), let version = versions[key] {
                applied(change, version: version, canonical: row.id)
            } else {
                notWritten.append((change, row.id))
            }
        }
        let same = try await storedAsSent(.achievements, notWritten, key: "achievement_id")
        for (change, _) in notWritten {
            guard let row = stored[achievementID(change)] else { continue }
            if same.contains(change.index) { unchanged(change, version: row.serverVersion, canonical: row.id) } else { superseded(change, by: row) }
        }
    }
}
