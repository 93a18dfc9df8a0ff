import Foundation
import HabitSyncDomain
import LibPQClient

/// Whole-record last writer wins (focus sessions; habits, reminders, selected apps and settings
/// merge by field, `PushBatch+FieldMerge.swift`): one set-based write (an update and an insert
/// in one pipeline), the LWW key decided in PostgreSQL, and the results told apart.
extension PushBatch {
    /// Writes the winner of each target among `changes` (the greatest LWW key; within a batch
    /// the later change on a tie) with one round trip, then reads the targets back to tell
    /// applied, unchanged and superseded apart.
    func applyLastWriterWins(
        _ table: SyncTable, _ changes: [PushChange],
        updatedByOverride: Set<Int> = [], recordOverride: [Int: ValidatedRecord] = [:], extraCondition: PGFragment? = nil
    ) async throws {
        func target(_ change: PushChange) -> UUID { change.id }
        guard !changes.isEmpty else { return }
        let winners = PushPlan.lastWriterWinners(changes, target: target)
        let ordered = winners.sorted { $0.value.index < $1.value.index }
        var versions: [UUID: Int64] = [:]
        let rows = ordered.map { key, change -> SyncRow in
            let version = allocateVersion()
            versions[key] = version
            let record = recordOverride[change.index] ?? change.record
            return SyncRow(
                id: key, version: version, updatedAt: change.updatedAt,
                updatedBy: updatedByOverride.contains(change.index) ? ServerDevice.name : device,
                isDelete: change.op == .delete, values: record.map(table.values) ?? [])
        }
        let write = SyncTableSQL.lastWriterWins(table, tenant: tenant, user: user, rows: rows, extraCondition: extraCondition)
        let written = Set(try await connection.pipeline(write).flatMap(\.rows).map { try $0.decode("id", as: UUID.self) })

        // A change that won and was written is applied with the version it was given; only
        // the others need the stored row (superseded ones return it as `current`), so a
        // batch that applied everything reads nothing back.
        func wasApplied(_ change: PushChange) -> Bool {
            let key = target(change)
            return winners[key]?.index == change.index && written.contains(key) && !updatedByOverride.contains(change.index) && versions[key] != nil
        }
        let readBack = Set(changes.filter { !wasApplied($0) }.map(target))
        let stored = readBack.isEmpty ? [:] : try await storedRows(table.collection, ids: Array(readBack))
        var sameKeyed: [(change: PushChange, key: UUID)] = []
        for change in changes {
            let key = target(change)
            if wasApplied(change), let version = versions[key] {
                applied(change, version: version, canonical: key)
                continue
            }
            guard let winner = winners[key], let row = stored[key] else {
                reject(change.index, ChangeRejection(.invalidField, "the record could not be stored"))
                continue
            }
            if row.lwwKey == LWWKey(updatedAt: change.updatedAt, deviceID: device) {
                sameKeyed.append((change, key))
            } else if table.collection == .focusSessions, winner.index == change.index,
                LWWKey(updatedAt: change.updatedAt, deviceID: device) > row.lwwKey, !row.deleted, let state = row.focusState,
                case .focusSession(let incoming)? = change.record,
                FocusSessionRecord.isTerminal(state), incoming.state != state
            {
                reject(change.index, ChangeRejection(.invalidTransition, field: "state", "the session is \(state), which is final; it cannot become \(incoming.state)"))
            } else {
                superseded(change, by: row)
            }
        }
        // Same key as stored: the same write again (unchanged) or other content (superseded).
        let same = try await storedAsSent(table, sameKeyed)
        for (change, key) in sameKeyed {
            guard let row = stored[key] else { continue }
            if same.contains(change.index) { unchanged(change, version: row.serverVersion, canonical: key) } else { superseded(change, by: row) }
        }
    }

    /// The indices of `changes` whose content the table already holds exactly, decided by
    /// PostgreSQL on the stored columns (one statement, none when `changes` is empty).
    func storedAsSent(_ table: SyncTable, _ changes: [(change: PushChange, key: UUID)]) async throws -> Set<Int> {
        guard !changes.isEmpty else { return [] }
        let rows = changes.map { change, target in
            SyncRow(
                id: target, version: Int64(change.index), updatedAt: change.updatedAt, updatedBy: device, isDelete: change.op == .delete,
                values: change.record.map(table.values) ?? [])
        }
        let query = SyncTableSQL.sameContent(table, tenant: tenant, user: user, rows: rows)
        return Set(try await connection.query(query).rows.map { Int(try $0.decode("change_index", as: Int64.self)) })
    }

    func storedRows(_ collection: SyncCollection, ids: [UUID]) async throws -> [UUID: StoredRow] {
        try await storedRows(SyncTableSQL.current(collection, tenant: tenant, user: user, ids: ids))
    }

    func storedRows(_ query: PGQuery) async throws -> [UUID: StoredRow] {
        try storedRows(try await connection.query(query))
    }

    /// The rows of a `SyncTableSQL.current` result, by id.
    func storedRows(_ result: PGResult) throws -> [UUID: StoredRow] {
        var rows: [UUID: StoredRow] = [:]
        for row in result.rows {
            let stored = StoredRow(
                id: try row.decode("id"), updatedAt: try row.decode("updated_at"),
                updatedBy: try row.decode("updated_by"), deleted: try row.decode("deleted"), serverVersion: try row.decode("server_version"),
                change: try row.decode("change"), focusState: try row.decodeIfPresent("focus_state"))
            rows[stored.id] = stored
        }
        return rows
    }
}
