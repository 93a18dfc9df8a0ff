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
            candidates = try await connection.query(PGQuery(unsafeSQL: SyncTableSQL.registeredUsageEvents, binds: [
                tenant.pgBind(), user.pgBind(), candidates.pgBind(),
            ])).rows.map { try $0.decode("id", as: UUID.self) }
        }
        let existing = candidates.isEmpty ? [:] : try await storedRows(table.collection, keys: candidates)
        let storedChanges = changes.filter { existing[$0.id.uuidString.lowercased()] != nil }
        let same = try await storedAsSent(table, storedChanges.map { ($0, $0.id) })
        var firstInBatch: [UUID: PushChange] = [:]
        var toInsert: [PushChange] = []
        for change in changes {
            if let row = existing[change.id.uuidString.lowercased()] {
                if same.contains(change.index) { unchanged(change, stored: row) } else {
                    reject(change.index, ChangeRejection(.immutableRecord, field: "record", "\(table.collection.rawValue) \(change.id.uuidString.lowercased()) already exists with other content; append a new record instead"))
                }
            } else if let first = firstInBatch[change.id] {
                if first.record != change.record {
                    reject(change.index, ChangeRejection(.immutableRecord, field: "record", "this batch already holds \(change.id.uuidString.lowercased()) with other content"))
                }
            } else {
                firstInBatch[change.id] = change
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
        let sql = registry ? SyncTableSQL.appendOnlyRegistered(table) : SyncTableSQL.appendOnly(table)
        let inserted = Set(try await connection.query(PGQuery(unsafeSQL: sql, binds: SyncTableSQL.binds(tenant: tenant, user: user, rows: rows, table: table)))
            .rows.map { try $0.decode("id", as: UUID.self) })
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
        func unlockedAt(_ change: PushChange) -> Date {
            guard case .achievement(let a)? = change.record else { return .distantFuture }
            return a.unlockedAt
        }
        var winners: [String: PushChange] = [:]
        for change in changes {
            let key = achievementID(change)
            if let current = winners[key], unlockedAt(current) <= unlockedAt(change) { continue }
            winners[key] = change
        }
        var versions: [String: Int64] = [:]
        let rows = winners.values.sorted { $0.index < $1.index }.map { change -> SyncRow in
            let version = allocateVersion()
            versions[achievementID(change)] = version
            return SyncRow(id: change.id, version: version, updatedAt: change.updatedAt, updatedBy: device, isDelete: false, values: change.record.map(SyncTable.achievements.values) ?? [])
        }
        let written = Set(try await connection.query(PGQuery(unsafeSQL: SyncTableSQL.insertOnce(.achievements), binds: SyncTableSQL.binds(tenant: tenant, user: user, rows: rows, table: .achievements)))
            .rows.map { try $0.decode("id", as: String.self) })
        let query = PGQuery(unsafeSQL: SyncTableSQL.current(.achievements, by: "achievement_id", keyType: "text"), binds: [
            tenant.pgBind(), user.pgBind(), Array(winners.keys).pgBind(),
        ])
        let stored = try await storedRows(query)
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
            if same.contains(change.index) { unchanged(change, stored: row, canonical: row.id) } else { superseded(change, by: row) }
        }
    }
}
