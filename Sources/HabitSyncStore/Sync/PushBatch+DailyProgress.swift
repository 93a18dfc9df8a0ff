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
            h.id, h.habit_id, h.date, h.goal_count, h.progress_count, h.timestamps AS stamps, h.difficulty, h.skip_reason, h.skip_note,
            h.updated_at, h.updated_by, h.deleted_at IS NOT NULL AS deleted, h.server_version,
            CASE WHEN h.count_set_at IS NOT NULL THEN h.count_set_value WHEN h.deleted_at IS NULL THEN h.progress_count ELSE 0 END AS set_value,
            CASE WHEN h.count_set_at = '-infinity' THEN NULL ELSE coalesce(h.count_set_at, h.updated_at) END AS set_at,
            coalesce(h.count_set_by, h.updated_by) AS set_by, added.*
            """
        // The day's kept additions as typed arrays, element i of each the same addition (one
        // aggregate pass fills them all in the same row order): nothing for the server to parse.
        let additions: PGQuery = """
            CROSS JOIN LATERAL (SELECT array_agg(a.made_at) AS added_at, array_agg(a.made_by) AS added_by,
                                       array_agg(a.batch_id) AS added_batch, array_agg(a.change_index) AS added_index,
                                       array_agg(a.delta) AS added_delta
                                FROM daily_progress_additions a
                                WHERE a.tenant_id = \(tenant) AND a.user_id = \(user) AND a.progress_id = h.id) added
            """
        return """
            SELECT p.* FROM unnest(\(ids)::uuid[]) AS k(id)
            CROSS JOIN LATERAL (SELECT \(columns) FROM daily_progress h \(additions)
                                WHERE h.tenant_id = \(tenant) AND h.user_id = \(user) AND h.id = k.id OFFSET 0) p
            UNION
            SELECT p.* FROM unnest(\(habits)::uuid[], \(dates)::date[]) AS k(habit_id, date)
            CROSS JOIN LATERAL (SELECT \(columns) FROM daily_progress h \(additions)
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
    static func updateProgressDay(tenant: UUID, user: String, _ day: ProgressDaySettlement.DayWrite) -> PGQuery {
        let timestamps = SQLText.array(day.timestamps.map(WireTime.format))
        return """
            UPDATE daily_progress h SET habit_id = \(day.fields.habitID), date = \(day.fields.date), goal_count = \(day.fields.goalCount),
                timestamps = \(timestamps)::timestamptz(3)[], difficulty = \(day.fields.difficulty)::int2, skip_reason = \(day.fields.skipReason),
                skip_note = \(day.fields.skipNote),
                progress_count = CASE WHEN \(day.deleted) THEN h.progress_count ELSE \(day.count) END,
                count_set_value = \(day.setting?.value ?? 0), count_set_at = coalesce(\(day.setting?.at.updatedAt)::timestamptz, '-infinity'),
                count_set_by = \(day.setting?.at.deviceID ?? ""),
                updated_at = \(day.key.updatedAt), updated_by = \(day.key.deviceID), server_version = \(day.version), synced_at = now(),
                deleted_at = CASE WHEN \(day.deleted) THEN coalesce(h.deleted_at, now()) END
            WHERE h.tenant_id = \(tenant) AND h.user_id = \(user) AND h.id = \(day.id)
            """
    }

    /// Forgets the additions the days' sets now cover and keeps the new ones that count: two
    /// statements for one pipeline, the delete first.
    static func writeAdditions(
        tenant: UUID, user: String, covered: [ProgressDaySettlement.CoveredAdditions], added: [ProgressDaySettlement.NewAddition], batch: UUID,
        device: String
    ) -> [PGQuery] {
        let forget: PGQuery = """
            DELETE FROM daily_progress_additions a
            USING unnest(\(covered.map(\.day))::uuid[], \(covered.map(\.through.updatedAt))::timestamptz[],
                         \(covered.map(\.through.deviceID))::text[])
                  AS k(id, set_at, set_by)
            WHERE a.tenant_id = \(tenant) AND a.user_id = \(user) AND a.progress_id = k.id
              AND (a.made_at, a.made_by COLLATE "C") <= (k.set_at, k.set_by COLLATE "C")
            """
        let keep: PGQuery = """
            INSERT INTO daily_progress_additions AS w (tenant_id, user_id, progress_id, made_at, made_by, batch_id, change_index, delta)
            SELECT owner.tenant_id, owner.user_id, k.id, k.made_at, \(device), \(batch), k.change_index, k.delta
            FROM unnest(\(added.map(\.day))::uuid[], \(added.map(\.addition.at.updatedAt))::timestamptz[], \(added.map(\.changeIndex))::int4[],
                        \(added.map(\.addition.delta))::int4[])
                 AS k(id, made_at, change_index, delta)
            CROSS JOIN \(OwnerRow.relation(tenant: tenant, user: user))
            ON CONFLICT DO NOTHING
            RETURNING w.progress_id
            """
        // Only what there is to do: a completion adds and forgets nothing.
        return (covered.isEmpty ? [] : [forget]) + (added.isEmpty ? [] : [keep])
    }

    /// Where daily progress's triggers step aside (`settlesDailyProgress`), what they would
    /// have done for a write of the batch, kept for one statement each: the digest change for
    /// the push's close, the streak months for `recomputeDerivedStateIfNeeded`.
    func settled(digest: RecordDigest, streakMonths: Set<LocalDate>) {
        settledDigests[.dailyProgress, default: RecordDigest()].add(digest)
        streakMonthsToForget.formUnion(streakMonths)
    }

    /// The user's streak summaries of `months` (their first days), which the next recompute
    /// rebuilds from the days: what `progress_months_after_*` (migration 0011) does.
    static func forgetStreakMonths(tenant: UUID, user: String, months: [LocalDate]) -> PGQuery {
        "DELETE FROM derived_streak_months WHERE tenant_id = \(tenant) AND user_id = \(user) AND month = ANY(\(months)::date[])"
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
    static func storedDays(_ result: PGResult) throws -> [ProgressDaySettlement.StoredDay] {
        try result.rows.map { row in
            // From the column: a tombstone keeps the timestamps later than its delete too.
            let timestamps = try row.decodeIfPresent("stamps", as: [Date].self) ?? []
            let setAt = try row.decodeIfPresent("set_at", as: Date.self)
            let setting = setAt.map {
                ProgressCounter.Setting(
                    value: (try? row.decode("set_value", as: Int.self)) ?? 0,
                    at: LWWKey(updatedAt: $0, deviceID: (try? row.decode("set_by", as: String.self)) ?? ""))
            }
            let additions = try storedAdditions(row)
            let fields = ProgressDayFields(
                habitID: try row.decodeIfPresent("habit_id", as: UUID.self), date: try row.decodeIfPresent("date", as: LocalDate.self),
                goalCount: try row.decodeIfPresent("goal_count", as: Int.self), difficulty: try row.decodeIfPresent("difficulty", as: Int.self),
                skipReason: try row.decodeIfPresent("skip_reason", as: String.self), skipNote: try row.decodeIfPresent("skip_note", as: String.self))
            let key = LWWKey(updatedAt: try row.decode("updated_at", as: Date.self), deviceID: try row.decode("updated_by", as: String.self))
            let deleted = try row.decode("deleted", as: Bool.self)
            // The stored record from its typed columns (a tombstone has none on the wire).
            var record: DailyProgressRecord?
            if !deleted, let habit = fields.habitID, let date = fields.date, let goal = fields.goalCount,
                let count = try row.decodeIfPresent("progress_count", as: Int.self)
            {
                record = DailyProgressRecord(
                    habitId: habit, date: date, progressCount: count, goalCount: goal, timestamps: timestamps, difficulty: fields.difficulty,
                    skipReason: fields.skipReason, skipNote: fields.skipNote)
            }
            return ProgressDaySettlement.StoredDay(
                id: try row.decode("id", as: UUID.self), serverVersion: try row.decode("server_version", as: Int64.self), fields: fields,
                merge: ProgressDayMerge.Stored(record: record, timestamps: timestamps, key: key, deleted: deleted, countSetting: setting),
                additions: additions)
        }
    }

    /// A stored day's kept additions, from `storedProgressDays`'s five arrays (all null for
    /// a day with none; of one length otherwise, the table's columns being `NOT NULL`).
    static func storedAdditions(_ row: PGRow) throws -> [(String, ProgressCounter.Addition)] {
        guard let at = try row.decodeIfPresent("added_at", as: [Date].self) else { return [] }
        let by = try row.decode("added_by", as: [String].self), batch = try row.decode("added_batch", as: [UUID].self)
        let index = try row.decode("added_index", as: [Int].self), delta = try row.decode("added_delta", as: [Int].self)
        guard [by.count, batch.count, index.count, delta.count].allSatisfy({ $0 == at.count }) else {
            throw PGError(kind: .decoding, message: "the stored additions' arrays differ in length", column: "added_at")
        }
        return at.indices.map { i in
            (
                ProgressDaySettlement.additionID(device: by[i], batch: batch[i], index: index[i]),
                ProgressCounter.Addition(delta: delta[i], at: LWWKey(updatedAt: at[i], deviceID: by[i]))
            )
        }
    }

    /// Applies the batch's daily progress: the upserts whose habit is live (the others are
    /// rejected), and the deletes. The habits and the stored days are read in one round trip,
    /// settled in Swift (`ProgressDaySettlement`), and written.
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
        let settlement = ProgressDaySettlement(
            changes: changes, stored: try Self.storedDays(results[0]), device: device, batch: batchID, firstVersion: nextVersion)
        nextVersion = settlement.nextVersion
        if settlement.movesDerivedState { derivedInputsChanged = true }

        if let only = settlement.writes.first, settlement.writes.count == 1, only.isStored, singleNode {
            // One stored day (a completion on a day that has one, what phones send most): a
            // plain update by its key; more days, or a new one, the one upsert for all. Not on
            // Citus, which refuses `now()` inside the update's CASE.
            try await writeLater([Self.updateProgressDay(tenant: tenant, user: user, only)])
        } else if !settlement.writes.isEmpty {
            try await writeLater([Self.writeProgressDays(tenant: tenant, user: user, ProgressDayWrites(settlement.writes))])
        }
        if settlesDailyProgress { settled(digest: settlement.digestChange, streakMonths: settlement.streakMonths) }
        if !settlement.covered.isEmpty || !settlement.added.isEmpty {
            let additions = Self.writeAdditions(
                tenant: tenant, user: user, covered: settlement.covered, added: settlement.added, batch: batchID, device: device)
            try await writeLater(additions)
        }
        let losers = Set(settlement.outcomes.filter { $0.outcome == .superseded }.map(\.day))
        let current = losers.isEmpty ? [:] : try await storedRows(.dailyProgress, ids: Array(losers))
        let byIndex = Dictionary(changes.map { ($0.index, $0) }, uniquingKeysWith: { first, _ in first })
        for outcome in settlement.outcomes {
            guard let change = byIndex[outcome.index] else { continue }
            switch outcome.outcome {
            case .applied:
                applied(change, version: outcome.version ?? 0, canonical: outcome.day)
            case .unchanged:
                unchanged(change, version: outcome.version, canonical: outcome.day)
            case .superseded:
                guard let row = current[outcome.day] else {
                    reject(change.index, ChangeRejection(.invalidField, "the record could not be stored"))
                    continue
                }
                superseded(change, by: row)
            }
        }
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

    init(_ days: [ProgressDaySettlement.DayWrite]) {
        for day in days {
            id.append(day.id)
            version.append(day.version)
            updatedAt.append(day.key.updatedAt)
            updatedBy.append(day.key.deviceID)
            deleted.append(day.deleted)
            habitID.append(day.fields.habitID)
            date.append(day.fields.date)
            goalCount.append(day.fields.goalCount)
            timestamps.append(SQLText.array(day.timestamps.map(WireTime.format)))
            difficulty.append(day.fields.difficulty)
            skipReason.append(day.fields.skipReason)
            skipNote.append(day.fields.skipNote)
            progressCount.append(day.count)
            setValue.append(day.setting?.value ?? 0)
            setAt.append(day.setting?.at.updatedAt)
            setBy.append(day.setting?.at.deviceID ?? "")
        }
    }
}
