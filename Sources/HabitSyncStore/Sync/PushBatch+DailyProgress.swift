import Foundation
import HabitSyncDomain
import LibPQClient

/// Daily progress: one record per (habitId, date), whatever id each device gave it, whose count
/// merges as a counter (`ProgressDayMerge`, `ProgressCounter`): the stored days are read once,
/// the batch's changes folded into them in Swift, and the result written with one statement
/// (plus one for the additions when there are any).
extension PushBatch {
    /// The stored days of `ids`, and of the natural keys: one index probe per key (as one `OR`,
    /// or as joins, PostgreSQL scanned the user's whole history; see `SyncTableSQL`). Each with
    /// its latest set and the additions made after it.
    static func storedProgressDays(tenant: UUID, user: String, ids: [UUID], habits: [UUID], dates: [LocalDate]) -> PGQuery {
        let columns: PGQuery = """
            h.id, h.habit_id, h.date, h.goal_count, h.progress_count, h.timestamps::text AS timestamps, h.timestamps AS stamps, h.difficulty, h.skip_reason, h.skip_note,
            h.updated_at, h.updated_by, h.deleted_at IS NOT NULL AS deleted, h.server_version,
            CASE WHEN h.count_set_at IS NOT NULL THEN h.count_set_value WHEN h.deleted_at IS NULL THEN h.progress_count ELSE 0 END AS set_value,
            CASE WHEN h.count_set_at = '-infinity' THEN NULL ELSE coalesce(h.count_set_at, h.updated_at) END AS set_at,
            coalesce(h.count_set_by, h.updated_by) AS set_by,
            (SELECT json_agg(json_build_array((extract(epoch FROM a.made_at) * 1000)::int8, a.made_by, a.batch_id, a.change_index, a.delta))::text
             FROM daily_progress_additions a WHERE a.tenant_id = \(tenant) AND a.user_id = \(user) AND a.progress_id = h.id) AS additions
            """
        return """
            SELECT p.* FROM unnest(\(ids)::uuid[]) AS k(id)
            CROSS JOIN LATERAL (SELECT \(columns) FROM daily_progress h WHERE h.tenant_id = \(tenant) AND h.user_id = \(user) AND h.id = k.id OFFSET 0) p
            UNION
            SELECT p.* FROM unnest(\(habits)::uuid[], \(dates)::date[]) AS k(habit_id, date)
            CROSS JOIN LATERAL (SELECT \(columns) FROM daily_progress h
                                WHERE h.tenant_id = \(tenant) AND h.user_id = \(user) AND h.habit_id = k.habit_id AND h.date = k.date OFFSET 0) p
            """
    }

    /// Writes the days, every column as the fold decided (the stored values where it kept
    /// them): one `INSERT … ON CONFLICT DO UPDATE`. Unconditional: the push holds the user's
    /// lock, under which the days were read.
    ///
    /// Not `UPDATE … FROM input` plus an insert of the rest: with no statistics yet (a young or
    /// restored database) the planner believed each user holds one row, put the stored rows on
    /// the outer side of the join and walked a ten-year user's every day for each push (5.9× a
    /// new user's push time). The conflict check probes the primary key once per row whatever
    /// the statistics say. The user's ids come from `OwnerRow` and `RETURNING` names the
    /// target's alias, so that Citus runs it whole on the user's worker (`SyncTableSQL`).
    static func writeProgressDays(tenant: UUID, user: String, _ days: ProgressDayWrites) -> PGQuery {
        """
        WITH input AS (
            SELECT i.id, i.version, i.updated_at, i.updated_by, i.deleted, i.habit_id, i.date,
                   i.goal_count, i.timestamps::timestamptz(3)[] AS timestamps, i.difficulty, i.skip_reason, i.skip_note, i.progress_count,
                   i.set_value, coalesce(i.set_at, '-infinity') AS set_at, i.set_by, now() AS now
            FROM unnest(\(days.id)::uuid[], \(days.version)::int8[], \(days.updatedAt)::timestamptz[], \(days.updatedBy)::text[],
                        \(days.deleted)::bool[], \(days.habitID)::uuid[], \(days.date)::date[],
                        \(days.goalCount)::int4[], \(days.timestamps)::text[], \(days.difficulty)::int2[], \(days.skipReason)::text[],
                        \(days.skipNote)::text[], \(days.progressCount)::int4[], \(days.setValue)::int4[], \(days.setAt)::timestamptz[],
                        \(days.setBy)::text[])
                 AS i(id, version, updated_at, updated_by, deleted, habit_id, date, goal_count, timestamps, difficulty,
                      skip_reason, skip_note, progress_count, set_value, set_at, set_by)
        )
        INSERT INTO daily_progress AS h (tenant_id, user_id, id, habit_id, date, progress_count, goal_count, timestamps, difficulty, skip_reason,
                                         skip_note, count_set_value, count_set_at, count_set_by, updated_at, updated_by, server_version, synced_at,
                                         deleted_at)
        SELECT owner.tenant_id, owner.user_id, i.id, i.habit_id, i.date, CASE WHEN NOT i.deleted THEN i.progress_count END, i.goal_count, i.timestamps,
               i.difficulty, i.skip_reason, i.skip_note, i.set_value, i.set_at, i.set_by, i.updated_at, i.updated_by, i.version, i.now,
               CASE WHEN i.deleted THEN i.now END
        FROM input i CROSS JOIN \(OwnerRow.relation(tenant: tenant, user: user))
        ON CONFLICT (tenant_id, user_id, id) DO UPDATE SET
            habit_id = excluded.habit_id, date = excluded.date, goal_count = excluded.goal_count, timestamps = excluded.timestamps,
            difficulty = excluded.difficulty, skip_reason = excluded.skip_reason, skip_note = excluded.skip_note,
            progress_count = coalesce(excluded.progress_count, h.progress_count),
            count_set_value = excluded.count_set_value, count_set_at = excluded.count_set_at, count_set_by = excluded.count_set_by,
            updated_at = excluded.updated_at, updated_by = excluded.updated_by, server_version = excluded.server_version,
            synced_at = excluded.synced_at,
            deleted_at = CASE WHEN excluded.deleted_at IS NOT NULL THEN coalesce(h.deleted_at, excluded.deleted_at) END
        RETURNING h.id
        """
    }

    /// `writeProgressDays` for one day that is stored already: the same columns, by its key,
    /// with scalar binds (no arrays to unnest, no insert attempted, no insert triggers).
    static func updateProgressDay(tenant: UUID, user: String, _ days: ProgressDayWrites) -> PGQuery {
        """
        UPDATE daily_progress h SET habit_id = \(days.habitID[0]), date = \(days.date[0]), goal_count = \(days.goalCount[0]),
            timestamps = \(days.timestamps[0])::timestamptz(3)[], difficulty = \(days.difficulty[0])::int2, skip_reason = \(days.skipReason[0]),
            skip_note = \(days.skipNote[0]),
            progress_count = CASE WHEN \(days.deleted[0]) THEN h.progress_count ELSE \(days.progressCount[0]) END,
            count_set_value = \(days.setValue[0]), count_set_at = coalesce(\(days.setAt[0])::timestamptz, '-infinity'), count_set_by = \(days.setBy[0]),
            updated_at = \(days.updatedAt[0]), updated_by = \(days.updatedBy[0]), server_version = \(days.version[0]), synced_at = now(),
            deleted_at = CASE WHEN \(days.deleted[0]) THEN coalesce(h.deleted_at, now()) END
        WHERE h.tenant_id = \(tenant) AND h.user_id = \(user) AND h.id = \(days.id[0])
        """
    }

    /// Forgets the additions the days' sets now cover and keeps the new ones that count: two
    /// statements for one pipeline, the delete first.
    static func writeAdditions(
        tenant: UUID, user: String, covered: (days: [UUID], setAt: [Date?], setBy: [String?]),
        added: (days: [UUID], madeAt: [Date], batch: UUID, index: [Int], delta: [Int]), device: String
    ) -> [PGQuery] {
        let forget: PGQuery = """
            DELETE FROM daily_progress_additions a
            USING unnest(\(covered.days)::uuid[], \(covered.setAt)::timestamptz[], \(covered.setBy)::text[]) AS k(id, set_at, set_by)
            WHERE a.tenant_id = \(tenant) AND a.user_id = \(user) AND a.progress_id = k.id
              AND (a.made_at, a.made_by COLLATE "C") <= (k.set_at, k.set_by COLLATE "C")
            """
        let keep: PGQuery = """
            INSERT INTO daily_progress_additions AS w (tenant_id, user_id, progress_id, made_at, made_by, batch_id, change_index, delta)
            SELECT owner.tenant_id, owner.user_id, k.id, k.made_at, \(device), \(added.batch), k.change_index, k.delta
            FROM unnest(\(added.days)::uuid[], \(added.madeAt)::timestamptz[], \(added.index)::int4[], \(added.delta)::int4[])
                 AS k(id, made_at, change_index, delta)
            CROSS JOIN \(OwnerRow.relation(tenant: tenant, user: user))
            ON CONFLICT DO NOTHING
            RETURNING w.progress_id
            """
        // Only what there is to do: a completion adds and forgets nothing.
        return (covered.days.isEmpty ? [] : [forget]) + (added.days.isEmpty ? [] : [keep])
    }

    /// One stored day, as `storedProgressDays` returns it.
    struct StoredDay {
        let id: UUID
        let naturalKey: String?
        /// The record columns as stored, written back where the fold keeps them.
        let columns: ProgressDayColumns
        let serverVersion: Int64
        let merge: ProgressDayMerge.Stored
        /// The additions after its set, by an id of their own (device, batch, index).
        let additions: [(id: String, addition: ProgressCounter.Addition)]

        /// The day as the derived records read it now.
        var dayRecord: DayRecord? { columns.dayRecord(count: merge.record?.progressCount, deleted: merge.deleted) }
    }

    /// What `applyDailyProgress` reads first: the stored days the changes name (by id, and by
    /// habit and date), and the live habits among those the upserts name (when any). Read with
    /// the push's prologue when daily progress is the batch's first step (`prefetch`).
    static func progressReads(_ changes: [PushChange], tenant: UUID, user: String) -> [PGQuery] {
        var natural: [(UUID, LocalDate)] = []
        for change in changes {
            if case .dailyProgress(let p)? = change.record { natural.append((p.habitId, p.date)) }
        }
        var reads = [storedProgressDays(tenant: tenant, user: user, ids: changes.map(\.id), habits: natural.map(\.0), dates: natural.map(\.1))]
        let habits = habitsReferenced(by: changes)
        if !habits.isEmpty { reads.append(liveHabits(tenant: tenant, user: user, ids: habits)) }
        return reads
    }

    /// The stored days, as `storedProgressDays` read them.
    func storedDays(_ result: PGResult) throws -> [StoredDay] {
        try result.rows.map { row in
            // From the column: a tombstone keeps the timestamps later than its delete too.
            let timestamps = try row.decodeIfPresent("stamps", as: [Date].self) ?? []
            let setAt = try row.decodeIfPresent("set_at", as: Date.self)
            let setting = setAt.map {
                ProgressCounter.Setting(
                    value: (try? row.decode("set_value", as: Int.self)) ?? 0,
                    at: LWWKey(updatedAt: $0, deviceID: (try? row.decode("set_by", as: String.self)) ?? ""))
            }
            var additions: [(String, ProgressCounter.Addition)] = []
            if let text = try row.decodeIfPresent("additions", as: String.self), case .array(let items) = try JSONParser.parse(bytes: Array(text.utf8)) {
                for case .array(let a) in items where a.count == 5 {
                    guard case .number(let ms) = a[0], case .string(let by) = a[1], case .string(let batch) = a[2],
                        case .number(let index) = a[3], case .number(let delta) = a[4]
                    else { continue }
                    additions.append(
                        (
                            "\(by)|\(batch)|\(Int(index))",
                            ProgressCounter.Addition(delta: Int(delta), at: LWWKey(updatedAt: Date(timeIntervalSince1970: ms / 1000), deviceID: by))
                        ))
                }
            }
            let habit = try row.decodeIfPresent("habit_id", as: UUID.self)
            let date = try row.decodeIfPresent("date", as: LocalDate.self)
            let key = LWWKey(updatedAt: try row.decode("updated_at", as: Date.self), deviceID: try row.decode("updated_by", as: String.self))
            let deleted = try row.decode("deleted", as: Bool.self)
            let skipReason = try row.decodeIfPresent("skip_reason", as: String.self)
            let goal = try row.decodeIfPresent("goal_count", as: Int.self), count = try row.decodeIfPresent("progress_count", as: Int.self)
            let difficulty = try row.decodeIfPresent("difficulty", as: Int.self), skipNote = try row.decodeIfPresent("skip_note", as: String.self)
            // The stored record from its typed columns (a tombstone has none on the wire).
            var record: DailyProgressRecord?
            if !deleted, let habit, let date, let count, let goal {
                record = DailyProgressRecord(
                    habitId: habit, date: date, progressCount: count, goalCount: goal, timestamps: timestamps, difficulty: difficulty,
                    skipReason: skipReason, skipNote: skipNote)
            }
            return StoredDay(
                id: try row.decode("id", as: UUID.self), naturalKey: habit.flatMap { h in date.map { "\(h)|\($0)" } },
                columns: ProgressDayColumns(
                    habitID: habit, date: date, goalCount: goal,
                    timestamps: try row.decodeIfPresent("timestamps", as: String.self),
                    difficulty: difficulty, skipReason: skipReason, skipNote: skipNote),
                serverVersion: try row.decode("server_version", as: Int64.self),
                merge: ProgressDayMerge.Stored(record: record, timestamps: timestamps, key: key, deleted: deleted, countSetting: setting),
                additions: additions)
        }
    }

    /// Applies the batch's daily progress: the upserts whose habit is live (the others are
    /// rejected), and the deletes. The habits and the stored days are read in one round trip.
    func applyDailyProgress(_ all: [PushChange], prefetched: [PGResult]? = nil) async throws {
        guard !all.isEmpty else { return }
        let reads = Self.progressReads(all, tenant: tenant, user: user)
        let results: [PGResult]
        if let prefetched, prefetched.count == reads.count {
            results = prefetched
        } else {
            results = try await connection.pipeline(reads)
        }
        guard results.count == reads.count else { throw PGError(kind: .client, message: "the progress reads returned \(results.count) results") }
        let live = reads.count == 1 ? [] : Set(try results[1].rows.map { try $0.decode("id", as: UUID.self) })
        let changes = keepingLiveHabits(all, live: live)
        guard !changes.isEmpty else { return }
        let stored = try storedDays(results[0])
        var byID: [UUID: StoredDay] = [:]
        var byNaturalKey: [String: UUID] = [:]
        for day in stored {
            byID[day.id] = day
            if let key = day.naturalKey { byNaturalKey[key] = day.id }
        }
        // The canonical id of each change: the day already stored for its (habitId, date), else
        // the first id this batch used for it, else its own.
        var targets: [UUID] = []
        var changesOf: [UUID: [PushChange]] = [:]
        for change in changes {
            var target = change.id
            if case .dailyProgress(let p)? = change.record {
                let key = "\(p.habitId)|\(p.date)"
                if let existing = byNaturalKey[key] { target = existing } else { byNaturalKey[key] = change.id }
            }
            if changesOf[target] == nil { targets.append(target) }
            changesOf[target, default: []].append(change)
        }

        var writes = ProgressDayWrites()
        var covered: (days: [UUID], setAt: [Date?], setBy: [String?]) = ([], [], [])
        var added: (days: [UUID], madeAt: [Date], batch: UUID, index: [Int], delta: [Int]) = ([], [], batchID, [], [])
        var outcomes: [(PushChange, UUID, ProgressDayMerge.Outcome, version: Int64?)] = []
        for target in targets {
            let day = byID[target]
            var merge = ProgressDayMerge(stored: day?.merge)
            for change in changesOf[target] ?? [] {
                var record: DailyProgressRecord?
                if case .dailyProgress(let p)? = change.record { record = p }
                merge.apply(.init(index: change.index, key: LWWKey(updatedAt: change.updatedAt, deviceID: device), record: record, increment: change.increment))
            }
            var version = day?.serverVersion
            if merge.changed, let key = merge.key {
                version = allocateVersion()
                var counter = ProgressCounter()
                if let setting = merge.countSetting { counter.apply(.set(setting)) }
                for (id, addition) in day?.additions ?? [] { counter.apply(.add(id: id, addition)) }
                for (index, addition) in merge.additions { counter.apply(.add(id: "\(device)|\(batchID.uuidString.lowercased())|\(index)", addition)) }
                var columns = merge.fieldsFrom?.record.map(ProgressDayColumns.init(record:)) ?? day?.columns ?? ProgressDayColumns()
                // The timestamps follow the count, not the fields' writer (`ProgressDayMerge`).
                columns.timestamps = SQLText.array((merge.timestamps ?? day?.merge.timestamps ?? []).map(WireTime.format))
                let count = min(counter.count, Int(Int32.max))
                writes.append(id: target, version: version ?? 0, key: key, deleted: merge.deleted, columns: columns, count: count, setting: merge.countSetting)
                if DayFootprint.canMoveDerivedState(from: day?.dayRecord, to: columns.dayRecord(count: count, deleted: merge.deleted)) {
                    derivedInputsChanged = true
                }
                if let setting = merge.countSetting, (day?.additions ?? []).contains(where: { !(setting.at < $0.addition.at) }) {
                    covered.days.append(target)
                    covered.setAt.append(setting.at.updatedAt)
                    covered.setBy.append(setting.at.deviceID)
                }
                for (index, addition) in merge.additions where merge.countSetting.map({ $0.at < addition.at }) ?? true {
                    added.days.append(target)
                    added.madeAt.append(addition.at.updatedAt)
                    added.index.append(index)
                    added.delta.append(addition.delta)
                }
            }
            for change in changesOf[target] ?? [] {
                outcomes.append((change, target, merge.outcomes[change.index] ?? .superseded, version))
            }
        }

        if !writes.id.isEmpty {
            // One stored day (a completion on a day that has one, what phones send most): a
            // plain update by its key; more days, or a new one, the one upsert for all. Not on
            // Citus, which refuses `now()` inside the update's CASE.
            if singleNode, writes.id.count == 1, byID[writes.id[0]] != nil {
                try await writeLater([Self.updateProgressDay(tenant: tenant, user: user, writes)])
            } else {
                try await writeLater([Self.writeProgressDays(tenant: tenant, user: user, writes)])
            }
        }
        if !covered.days.isEmpty || !added.days.isEmpty {
            try await writeLater(Self.writeAdditions(tenant: tenant, user: user, covered: covered, added: added, device: device))
        }
        let losers = Set(outcomes.filter { $0.2 == .superseded }.map(\.1))
        let current = losers.isEmpty ? [:] : try await storedRows(.dailyProgress, ids: Array(losers))
        for (change, target, outcome, version) in outcomes {
            switch outcome {
            case .applied:
                applied(change, version: version ?? 0, canonical: target)
            case .unchanged:
                unchanged(change, version: version, canonical: target)
            case .superseded:
                guard let row = current[target] else {
                    reject(change.index, ChangeRejection(.invalidField, "the record could not be stored"))
                    continue
                }
                superseded(change, by: row)
            }
        }
    }
}

/// A day's record columns as `daily_progress` holds them: from an incoming record, or as stored
/// (`timestamps` an array literal, `{…}`).
struct ProgressDayColumns {
    var habitID: UUID?
    var date: LocalDate?
    var goalCount: Int?
    var timestamps: String?
    var difficulty: Int?
    var skipReason: String?
    var skipNote: String?
}

extension ProgressDayColumns {
    /// The day as the derived records read it, with this count; nil where they read nothing
    /// (a tombstone, or a row without the fields a live day has).
    func dayRecord(count: Int?, deleted: Bool) -> DayRecord? {
        guard !deleted, let habitID, let date, let count, let goalCount else { return nil }
        return DayRecord(habitID: habitID, date: date, progressCount: count, goalCount: goalCount, skipped: skipReason != nil)
    }

    init(record: DailyProgressRecord) {
        self.init(
            habitID: record.habitId, date: record.date, goalCount: record.goalCount,
            timestamps: SQLText.array(record.timestamps.map(WireTime.format)), difficulty: record.difficulty,
            skipReason: record.skipReason, skipNote: record.skipNote)
    }
}

/// The days one batch writes, column by column (`writeProgressDays`).
struct ProgressDayWrites {
    var id: [UUID] = []
    var version: [Int64] = []
    var updatedAt: [Date] = []
    var updatedBy: [String] = []
    var deleted: [Bool] = []
    var habitID: [UUID?] = []
    var date: [LocalDate?] = []
    var goalCount: [Int?] = []
    /// Array literals (`{…}`).
    var timestamps: [String?] = []
    var difficulty: [Int?] = []
    var skipReason: [String?] = []
    var skipNote: [String?] = []
    var progressCount: [Int] = []
    var setValue: [Int] = []
    var setAt: [Date?] = []
    var setBy: [String] = []

    mutating func append(
        id: UUID, version: Int64, key: LWWKey, deleted: Bool, columns: ProgressDayColumns, count: Int,
        setting: ProgressCounter.Setting?
    ) {
        self.id.append(id)
        self.version.append(version)
        updatedAt.append(key.updatedAt)
        updatedBy.append(key.deviceID)
        self.deleted.append(deleted)
        habitID.append(columns.habitID)
        date.append(columns.date)
        goalCount.append(columns.goalCount)
        timestamps.append(columns.timestamps)
        difficulty.append(columns.difficulty)
        skipReason.append(columns.skipReason)
        skipNote.append(columns.skipNote)
        progressCount.append(count)
        setValue.append(setting?.value ?? 0)
        setAt.append(setting?.at.updatedAt)
        setBy.append(setting?.at.deviceID ?? "")
    }
}
