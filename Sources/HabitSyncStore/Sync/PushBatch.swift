import Foundation
import HabitSyncDomain
import LibPQClient

/// One batch being applied inside its push transaction: validates the changes, writes each
/// collection's share with one set-based statement (plus one to read back what won), and
/// collects the per-change results and the conflict log.
///
/// Collections are applied in dependency order (`SyncCollection.applyOrder`: habits before
/// the reminders and progress that refer to them), each collection's changes in array order.
final class PushBatch {
    let connection: PGConnection
    let tenant: UUID
    let user: String
    let device: String
    let batchID: UUID
    let derivedRecordID: UUID
    let context: ValidationContext
    var now: Date { context.now }
    /// The slow path, taken only after PostgreSQL refused data on the fast one: each
    /// collection's write runs under a savepoint, and a refused change is isolated by
    /// bisection and rejected, so the rest of the batch is still stored.
    let isolatesRefusals: Bool
    var nextVersion: Int64
    var results: [ChangeResult?] = []
    private var raw: [[String: JSONValue]] = []
    private var accepted: [Int: PushChange] = [:]
    var tally = PushStore.Tally()
    /// Steps outside any one change that PostgreSQL refused on the slow path (logged by the caller).
    var skippedSteps: [String] = []

    init(connection: PGConnection, tenant: UUID, user: String, device: String, batchID: UUID, derivedRecordID: UUID, firstVersion: Int64,
         context: ValidationContext, isolatesRefusals: Bool) {
        self.connection = connection
        self.tenant = tenant
        self.user = user
        self.device = device
        self.batchID = batchID
        self.derivedRecordID = derivedRecordID
        self.nextVersion = firstVersion
        self.context = context
        self.isolatesRefusals = isolatesRefusals
    }


    private func allocateVersion() -> Int64 {
        defer { nextVersion += 1 }
        return nextVersion
    }

    // MARK: - Driving

    func apply(_ changes: [[String: JSONValue]]) async throws {
        raw = changes
        results = Array(repeating: nil, count: changes.count)
        var valid: [PushChange] = []
        for (index, fields) in changes.enumerated() {
            do {
                let change = try PushChange.validate(fields, index: index, context: context)
                accepted[index] = change
                valid.append(change)
            } catch {
                reject(index, error)
            }
        }
        let byCollection = Dictionary(grouping: valid, by: \.collection)
        for collection in SyncCollection.applyOrder {
            guard let changes = byCollection[collection], !changes.isEmpty else { continue }
            try await isolatingRefusals(changes) { changes in try await self.apply(collection, changes) }
        }
    }

    /// Writes one collection's share of the batch.
    private func apply(_ collection: SyncCollection, _ changes: [PushChange]) async throws {
            switch collection {
            case .habits:
                try await applyLastWriterWins(.habits, changes) { $0.id }
            case .reminders:
                try await applyLastWriterWins(.reminders, try await withLiveHabits(changes)) { $0.id }
            case .dailyProgress:
                let referenced = try await withLiveHabits(changes)
                let canonical = try await canonicalProgressIDs(referenced)
                try await applyLastWriterWins(.dailyProgress, referenced) { canonical[$0.index] ?? $0.id }
            case .focusSessions:
                let adjusted = try await settleRunningSessions(changes)
                try await applyLastWriterWins(.focusSessions, changes, updatedByOverride: adjusted.serverAuthored, recordOverride: adjusted.records,
                                              extraCondition: "NOT (h.state IN ('completed', 'abandoned') AND NOT i.is_delete AND i.state IS DISTINCT FROM h.state)")
            case .selectedApps:
                try await applyLastWriterWins(.selectedApps, changes) { $0.id }
            case .userSettings:
                try await applyLastWriterWins(.userSettings, changes, keyedByUser: true) { _ in self.derivedRecordID }
            case .xpTransactions:
                try await applyAppendOnly(.xpTransactions, changes)
            case .usageEvents:
                try await applyAppendOnly(.usageEvents, changes)
            case .achievements:
                try await applyInsertOnce(changes)
            case .globalStreak, .userProgress, .usageStreak:
                break  // refused during validation
            }
    }

    /// Collections whose changes feed the derived records.
    static let derivedInputs: Set<String> = ["habits", "dailyProgress", "xpTransactions", "usageEvents", "userSettings"]

    /// Recomputes the derived records when this batch applied a change to their inputs.
    func recomputeDerivedStateIfNeeded() async throws {
        let touched = tally.counts.contains { Self.derivedInputs.contains($0.key) && ($0.value["applied"] ?? 0) > 0 }
        guard touched else { return }
        let writer = DerivedStateWriter(connection: connection, tenant: tenant, user: user, derivedRecordID: derivedRecordID, now: now)
        try await skippingRefusal(of: "derived-state recompute") {
            self.nextVersion = try await writer.recompute(nextVersion: self.nextVersion)
        }
    }

    func responseJSON() -> String {
        let items = results.enumerated().map { index, result in
            (result ?? ChangeResult(index: index, status: .rejected, error: ChangeRejection(.invalidField, "not processed"))).json
        }
        return "{\"batchId\":\"\(batchID.uuidString.lowercased())\",\"results\":[" + items.joined(separator: ",") + "]}"
    }

    // MARK: - Results

    func record(_ result: ChangeResult, collection: String) {
        results[result.index] = result
        tally.counts[collection, default: [:]][result.status.rawValue, default: 0] += 1
    }

    private func rawID(_ index: Int) -> String? {
        guard case .string(let text)? = raw[index]["id"] else { return nil }
        return UUID(uuidString: text)?.uuidString.lowercased() ?? TextRules.storable(String(text.unicodeScalars.prefix(200)))
    }

    func rawCollection(_ index: Int) -> String {
        guard case .string(let text)? = raw[index]["collection"], SyncCollection(rawValue: text) != nil else { return "unknown" }
        return text
    }

    func reject(_ index: Int, _ error: any Error) {
        let rejection = error as? ChangeRejection ?? ChangeRejection(.invalidField, "\(error)")
        var result = ChangeResult(index: index, id: rawID(index), status: .rejected, error: rejection)
        result.clamped = accepted[index]?.clamped ?? false
        record(result, collection: rawCollection(index))
    }

    private func applied(_ change: PushChange, version: Int64, canonical: UUID? = nil) {
        var result = ChangeResult(index: change.index, id: change.id.uuidString.lowercased(), status: .applied, serverVersion: version)
        if let canonical, canonical != change.id { result.canonicalId = canonical }
        result.clamped = change.clamped
        record(result, collection: change.collection.rawValue)
    }

    private func unchanged(_ change: PushChange, stored: StoredRow, canonical: UUID? = nil) {
        var result = ChangeResult(index: change.index, id: change.id.uuidString.lowercased(), status: .unchanged, serverVersion: stored.serverVersion)
        if let canonical, canonical != change.id { result.canonicalId = canonical }
        result.clamped = change.clamped
        record(result, collection: change.collection.rawValue)
    }

    private func superseded(_ change: PushChange, by stored: StoredRow) {
        var result = ChangeResult(index: change.index, id: change.id.uuidString.lowercased(), status: .superseded, serverVersion: stored.serverVersion)
        result.current = stored.change
        result.clamped = change.clamped
        result.winningKey = (stored.updatedAt, stored.updatedBy)
        if stored.id != change.id { result.canonicalId = stored.id }
        record(result, collection: change.collection.rawValue)
    }

    // MARK: - Last writer wins

    /// Writes the winner of each target among `changes` (the greatest LWW key; within a batch
    /// the later change on a tie) with one statement, then reads the targets back to tell
    /// applied, unchanged and superseded apart.
    private func applyLastWriterWins(
        _ table: SyncTable, _ changes: [PushChange], keyedByUser: Bool = false,
        updatedByOverride: Set<Int> = [], recordOverride: [Int: ValidatedRecord] = [:], extraCondition: String? = nil,
        target: (PushChange) -> UUID = { $0.id }
    ) async throws {
        guard !changes.isEmpty else { return }
        var winners: [UUID: PushChange] = [:]
        for change in changes {
            let key = target(change)
            if let current = winners[key] {
                let a = LWWKey(updatedAt: current.updatedAt, deviceID: device), b = LWWKey(updatedAt: change.updatedAt, deviceID: device)
                if !(b < a) { winners[key] = change }
            } else {
                winners[key] = change
            }
        }
        let ordered = winners.sorted { $0.value.index < $1.value.index }
        var versions: [UUID: Int64] = [:]
        let rows = ordered.map { key, change -> SyncRow in
            let version = allocateVersion()
            versions[key] = version
            let record = recordOverride[change.index] ?? change.record
            return SyncRow(
                id: key, version: version, updatedAt: change.updatedAt,
                updatedBy: updatedByOverride.contains(change.index) ? "server" : device,
                isDelete: change.op == .delete, values: record.map(table.values) ?? [])
        }
        let sql = SyncTableSQL.lastWriterWins(table, keyedByUser: keyedByUser, extraCondition: extraCondition)
        let written = Set(try await connection.query(PGQuery(unsafeSQL: sql, binds: SyncTableSQL.binds(tenant: tenant, user: user, rows: rows, table: table)))
            .rows.map { try $0.decode("id", as: UUID.self) })

        if table.collection == .habits {
            let deleted = ordered.filter { written.contains($0.key) && $0.value.op == .delete }.map { ($0.key, $0.value.updatedAt) }
            try await cascadeHabitDeletes(deleted)
        }
        if table.collection == .userSettings, let settings = ordered.first, written.contains(settings.key) {
            // The user's calendar follows their settings; deleted settings mean UTC again.
            var zone = "UTC"
            if case .userSettings(let record)? = settings.value.record { zone = record.timezone }
            try await connection.query("UPDATE users SET time_zone = \(zone) WHERE tenant_id = \(tenant) AND user_id = \(user)")
        }

        // A change that won and was written is applied with the version it was given; only
        // the others need the stored row (superseded ones return it as `current`), so a
        // batch that applied everything reads nothing back.
        func wasApplied(_ change: PushChange) -> Bool {
            let key = target(change)
            return winners[key]?.index == change.index && written.contains(key) && !updatedByOverride.contains(change.index) && versions[key] != nil
        }
        let readBack = Set(changes.filter { !wasApplied($0) }.map(target))
        let stored = readBack.isEmpty ? [:] : try await storedRows(table.collection, keys: Array(readBack))
        var sameKeyed: [(change: PushChange, key: UUID)] = []
        for change in changes {
            let key = target(change)
            if wasApplied(change), let version = versions[key] {
                applied(change, version: version, canonical: key)
                continue
            }
            guard let winner = winners[key], let row = stored[key.uuidString.lowercased()] else {
                reject(change.index, ChangeRejection(.invalidField, "the record could not be stored"))
                continue
            }
            if row.lwwKey == LWWKey(updatedAt: change.updatedAt, deviceID: device) {
                sameKeyed.append((change, key))
            } else if table.collection == .focusSessions, winner.index == change.index,
                LWWKey(updatedAt: change.updatedAt, deviceID: device) > row.lwwKey, !row.deleted, let state = row.focusState,
                case .focusSession(let incoming)? = change.record,
                FocusSessionRecord.isTerminal(state), incoming.state != state {
                reject(change.index, ChangeRejection(.invalidTransition, field: "state", "the session is \(state), which is final; it cannot become \(incoming.state)"))
            } else {
                superseded(change, by: row)
            }
        }
        // Same key as stored: the same write again (unchanged) or other content (superseded).
        let same = try await storedAsSent(table, sameKeyed, keyedByUser: keyedByUser)
        for (change, key) in sameKeyed {
            guard let row = stored[key.uuidString.lowercased()] else { continue }
            if same.contains(change.index) { unchanged(change, stored: row, canonical: key) } else { superseded(change, by: row) }
        }
    }

    /// The indices of `changes` whose content the table already holds exactly, decided by
    /// PostgreSQL on the stored columns (one statement, none when `changes` is empty).
    private func storedAsSent(_ table: SyncTable, _ changes: [(change: PushChange, key: UUID)], keyedByUser: Bool = false, key: String = "id") async throws -> Set<Int> {
        guard !changes.isEmpty else { return [] }
        let rows = changes.map { change, target in
            SyncRow(id: target, version: Int64(change.index), updatedAt: change.updatedAt, updatedBy: device, isDelete: change.op == .delete,
                    values: change.record.map(table.values) ?? [])
        }
        let sql = SyncTableSQL.sameContent(table, keyedByUser: keyedByUser, key: key)
        return Set(try await connection.query(PGQuery(unsafeSQL: sql, binds: SyncTableSQL.binds(tenant: tenant, user: user, rows: rows, table: table)))
            .rows.map { Int(try $0.decode("change_index", as: Int64.self)) })
    }

    private func storedRows(_ collection: SyncCollection, keys: [UUID], by column: String = "id") async throws -> [String: StoredRow] {
        let sql = SyncTableSQL.current(collection, by: column)
        let query = PGQuery(unsafeSQL: sql, binds: [tenant.pgBind(), user.pgBind(), keys.pgBind()])
        return try await storedRows(query)
    }

    private func storedRows(_ query: PGQuery) async throws -> [String: StoredRow] {
        var rows: [String: StoredRow] = [:]
        for row in try await connection.query(query).rows {
            let stored = StoredRow(
                id: try row.decode("id"), key: try row.decode("key"), updatedAt: try row.decode("updated_at"),
                updatedBy: try row.decode("updated_by"), deleted: try row.decode("deleted"), serverVersion: try row.decode("server_version"),
                change: try row.decode("change"), focusState: try row.decodeIfPresent("focus_state"))
            rows[stored.key] = stored
        }
        return rows
    }

    // MARK: - Habits' dependents

    static let liveHabits = """
        SELECT id FROM habits WHERE tenant_id = $1 AND user_id = $2 AND deleted_at IS NULL AND id = ANY($3::uuid[])
        """

    /// Keeps deletes and the upserts whose habit exists and is not deleted (after this batch's
    /// habits); rejects the others with `unknown_reference`.
    private func withLiveHabits(_ changes: [PushChange]) async throws -> [PushChange] {
        func habitID(_ change: PushChange) -> UUID? {
            switch change.record {
            case .reminder(let r)?: r.habitId
            case .dailyProgress(let p)?: p.habitId
            default: nil
            }
        }
        let referenced = Set(changes.compactMap(habitID))
        guard !referenced.isEmpty else { return changes }
        let live = Set(try await connection.query(PGQuery(unsafeSQL: Self.liveHabits, binds: [
            tenant.pgBind(), user.pgBind(), Array(referenced).pgBind(),
        ])).rows.map { try $0.decode("id", as: UUID.self) })
        return changes.filter { change in
            guard let habit = habitID(change), !live.contains(habit) else { return true }
            reject(change.index, ChangeRejection(.unknownReference, field: "habitId", "habitId \(habit.uuidString.lowercased()) names no habit of this user (or a deleted one)"))
            return false
        }
    }

    /// Tombstones the reminders and progress of deleted habits, with the delete's `updatedAt`
    /// and `updatedBy: "server"`, each with a version of its own. One statement per table.
    private func cascadeHabitDeletes(_ deleted: [(UUID, Date)]) async throws {
        guard !deleted.isEmpty else { return }
        for table in ["reminders", "daily_progress"] {
            let sql = """
                WITH doomed AS (SELECT * FROM unnest($3::uuid[], $4::timestamptz[]) AS d(habit_id, updated_at)),
                numbered AS (
                    SELECT c.id, d.updated_at, row_number() OVER (ORDER BY c.id) AS n
                    FROM \(table) c JOIN doomed d ON c.habit_id = d.habit_id
                    WHERE c.tenant_id = $1 AND c.user_id = $2 AND c.deleted_at IS NULL
                      AND (c.updated_at, c.updated_by COLLATE "C") < (d.updated_at, 'server' COLLATE "C")
                )
                UPDATE \(table) c SET deleted_at = now(), updated_at = nb.updated_at, updated_by = 'server',
                    server_version = $5 + nb.n, synced_at = now()
                FROM numbered nb
                WHERE c.tenant_id = $1 AND c.user_id = $2 AND c.id = nb.id
                RETURNING c.server_version
                """
            let versions = try await connection.query(PGQuery(unsafeSQL: sql, binds: [
                tenant.pgBind(), user.pgBind(), deleted.map(\.0).pgBind(), deleted.map { $0.1 }.pgBind(),
                (nextVersion - 1).pgBind(),
            ])).rows.map { try $0.decode("server_version", as: Int64.self) }
            if let highest = versions.max() { nextVersion = highest + 1 }
        }
    }

    // MARK: - Daily progress: one record per (habitId, date)

    /// By id, and by natural key: two index lookups (as one `OR`, PostgreSQL scanned the
    /// user's whole history).
    static let progressByNaturalKey = """
        SELECT id, habit_id, date::text AS date FROM daily_progress
        WHERE tenant_id = $1 AND user_id = $2 AND id = ANY($3::uuid[])
        UNION
        SELECT p.id, p.habit_id, p.date::text FROM unnest($4::uuid[], $5::date[]) AS k(habit_id, date)
        JOIN daily_progress p ON p.tenant_id = $1 AND p.user_id = $2 AND p.habit_id = k.habit_id AND p.date = k.date
        """

    /// The canonical id of each progress change: the row already stored for its (habitId, date),
    /// else the first id this batch used for it, else its own.
    private func canonicalProgressIDs(_ changes: [PushChange]) async throws -> [Int: UUID] {
        var natural: [(Int, UUID, LocalDate)] = []
        for change in changes {
            if case .dailyProgress(let p)? = change.record { natural.append((change.index, p.habitId, p.date)) }
        }
        let rows = try await connection.query(PGQuery(unsafeSQL: Self.progressByNaturalKey, binds: [
            tenant.pgBind(), user.pgBind(), changes.map(\.id).pgBind(),
            natural.map(\.1).pgBind(), natural.map { $0.2.description }.pgBind(),
        ])).rows
        var byNaturalKey: [String: UUID] = [:]
        for row in rows {
            // A tombstone of an id the server never saw has no natural key.
            guard let habit = try row.decodeIfPresent("habit_id", as: UUID.self), let date = try row.decodeIfPresent("date", as: String.self) else { continue }
            byNaturalKey["\(habit)|\(date)"] = try row.decode("id", as: UUID.self)
        }
        var canonical: [Int: UUID] = [:]
        for change in changes {
            guard case .dailyProgress(let p)? = change.record else { continue }
            let key = "\(p.habitId)|\(p.date)"
            if let existing = byNaturalKey[key] {
                canonical[change.index] = existing
            } else {
                byNaturalKey[key] = change.id
                canonical[change.index] = change.id
            }
        }
        return canonical
    }

    // MARK: - Focus sessions: at most one running per user

    static let runningSessions = """
        SELECT id, start_time FROM focus_sessions
        WHERE tenant_id = $1 AND user_id = $2 AND state IN ('active', 'paused') AND deleted_at IS NULL
        """

    /// When more than one session would be running, every one but the latest-started is
    /// abandoned by the server at the latest one's start: stored ones with one statement
    /// before the write, incoming ones by writing them as abandoned (authored by the server).
    private func settleRunningSessions(_ changes: [PushChange]) async throws -> (serverAuthored: Set<Int>, records: [Int: ValidatedRecord]) {
        var latestByID: [UUID: PushChange] = [:]
        for change in changes where latestByID[change.id].map({ $0.updatedAt <= change.updatedAt }) ?? true { latestByID[change.id] = change }
        var running: [(id: UUID, start: Date, change: PushChange?)] = latestByID.values.compactMap { change in
            guard case .focusSession(let session)? = change.record, session.isRunning else { return nil }
            return (change.id, session.startTime, change)
        }
        let stored = try await connection.query(PGQuery(unsafeSQL: Self.runningSessions, binds: [tenant.pgBind(), user.pgBind()])).rows
        for row in stored {
            let id = try row.decode("id", as: UUID.self)
            if latestByID[id] == nil { running.append((id, try row.decode("start_time", as: Date.self), nil)) }
        }
        guard running.count > 1, let survivor = running.max(by: { ($0.start, $0.id.uuidString) < ($1.start, $1.id.uuidString) }) else { return ([], [:]) }
        var serverAuthored: Set<Int> = []
        var records: [Int: ValidatedRecord] = [:]
        var storedLosers: [UUID] = []
        for session in running where session.id != survivor.id {
            if let change = session.change, case .focusSession(var record)? = change.record {
                record.state = "abandoned"
                record.endTime = max(survivor.start, record.startTime)
                for other in changes where other.id == change.id {
                    serverAuthored.insert(other.index)
                    records[other.index] = .focusSession(record)
                }
            } else {
                storedLosers.append(session.id)
            }
        }
        if !storedLosers.isEmpty {
            let sql = """
                WITH losers AS (SELECT id, row_number() OVER (ORDER BY id) AS n FROM unnest($3::uuid[]) AS l(id))
                UPDATE focus_sessions f SET state = 'abandoned', end_time = greatest($4::timestamptz, f.start_time),
                    updated_at = greatest(date_trunc('milliseconds', now()), f.updated_at + interval '1 millisecond'),
                    updated_by = 'server', server_version = $5 + l.n, synced_at = now()
                FROM losers l
                WHERE f.tenant_id = $1 AND f.user_id = $2 AND f.id = l.id
                """
            try await connection.query(PGQuery(unsafeSQL: sql, binds: [
                tenant.pgBind(), user.pgBind(), storedLosers.pgBind(), survivor.start.pgBind(),
                (nextVersion - 1).pgBind(),
            ]))
            nextVersion += Int64(storedLosers.count)
        }
        return (serverAuthored, records)
    }

    // MARK: - Append-only and insert-once

    /// The first write of an id is stored; the same again is unchanged; anything else is
    /// `immutable_record`.
    private func applyAppendOnly(_ table: SyncTable, _ changes: [PushChange]) async throws {
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
    private func applyInsertOnce(_ changes: [PushChange]) async throws {
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

    // MARK: - Conflict log

    static let insertConflicts = """
        INSERT INTO conflict_log (tenant_id, user_id, collection, record_id, outcome, error_code, error_field, error_message, op,
                                  incoming_payload, incoming_updated_at, incoming_updated_by, winning_updated_at, winning_updated_by,
                                  device_id, batch_id)
        SELECT $1, $2, c.collection, c.record_id, c.outcome, c.error_code, c.error_field, c.error_message, c.op,
               c.payload::jsonb, c.incoming_updated_at, $3, c.winning_updated_at, c.winning_updated_by, $3, $4
        FROM unnest($5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[],
                    $13::timestamptz[], $14::timestamptz[], $15::text[])
             AS c(collection, record_id, outcome, error_code, error_field, error_message, op, payload, incoming_updated_at,
                  winning_updated_at, winning_updated_by)
        """

    /// Every superseded and rejected change, with its payload and both LWW keys: one statement.
    func logConflicts() async throws {
        let losers = results.compactMap { $0 }.filter { $0.status == .superseded || $0.status == .rejected }
        guard !losers.isEmpty else { return }
        func text(_ index: Int, _ field: String) -> String? {
            guard case .string(let value)? = raw[index][field] else { return nil }
            return TextRules.storable(value)
        }
        func storable(_ text: String?, _ length: Int) -> String? { text.map { TextRules.storable(String($0.unicodeScalars.prefix(length))) } }
        let binds: [PGBind] = [
            tenant.pgBind(), user.pgBind(), device.pgBind(), batchID.pgBind(),
            losers.map { rawCollection($0.index) }.pgBind(),
            losers.map { storable($0.id, 200) }.pgBind(),
            losers.map { $0.status.rawValue }.pgBind(),
            losers.map { $0.error?.code.rawValue }.pgBind(),
            losers.map { storable($0.error?.field, 200) }.pgBind(),
            losers.map { storable($0.error?.message, 2000) }.pgBind(),
            losers.map { text($0.index, "op").flatMap { ChangeOperation(rawValue: $0)?.rawValue } }.pgBind(),
            losers.map { JSONValue.object(raw[$0.index]).storable.jsonText }.pgBind(),
            losers.map { accepted[$0.index]?.updatedAt ?? text($0.index, "updatedAt").flatMap { WireTime.parse($0, years: LocalDate.recordYears) } }.pgBind(),
            losers.map { $0.winningKey?.updatedAt }.pgBind(),
            losers.map { $0.winningKey?.updatedBy }.pgBind(),
        ]
        try await skippingRefusal(of: "conflict log") {
            try await self.connection.query(PGQuery(unsafeSQL: Self.insertConflicts, binds: binds))
        }
    }
}
