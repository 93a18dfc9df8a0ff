import Foundation
import HabitSyncDomain
import LibPQClient

/// The set-based statements that write one collection's share of a batch: one statement for
/// all of its rows, with the conflict rule decided by PostgreSQL under the row locks the
/// statement takes (and the user row lock the push holds). Generated from the collection's
/// `SyncTable`, so each collection's SQL has the same shape; every value is a bind.
///
/// On Citus each statement runs whole on the user's worker (router execution), so a push
/// commits there alone, in one phase. That asks two things of the SQL: an `INSERT … SELECT`
/// takes `tenant_id` and `user_id` from the user's row (`OwnerRow`) and names its target with
/// an alias for `RETURNING`, and no `INSERT` sits in a `WITH` (Citus plans one on the
/// coordinator, copies its input to every worker and commits on all of them with
/// `PREPARE TRANSACTION`). A write that both updates and inserts is two statements, sent in
/// one pipeline.
///
/// Every lookup of stored rows by the batch's keys is one index probe per key, whatever the
/// user's history: a correlated subquery with `OFFSET 0` (which PostgreSQL neither flattens
/// into a join nor turns into an anti-join). As a join, the planner may hash the user's every
/// row instead, and it tends to: the row-level-security predicate repeats the user filter,
/// so it believes each user holds about one row.
enum SyncTableSQL {
    /// The rows as the relation `i(id, version, updated_at, updated_by, is_delete, has_data,
    /// <data columns>, now)`, one array bind per column (`has_data`: the row carries values; a
    /// delete carries none, but a tombstone of a record merged field by field may), the data columns already cast to their column types and
    /// `now` the transaction's time. Id arrays are bound as uuid[] itself: a text[] cast in SQL
    /// is not leakproof, so row-level security would keep it out of the index condition and
    /// filter the user's every row instead.
    ///
    /// Casts and `now()` are made here, not in the writes that read the rows, because Citus
    /// refuses functions that are not immutable (text to timestamptz is only stable) inside the
    /// `CASE` and `COALESCE` of an `UPDATE` of a distributed table (deploy/README.md).
    static func input(_ table: SyncTable, _ rows: [SyncRow]) -> PGQuery {
        var arrays: [PGQuery] = [
            "\(rows.map(\.id))::uuid[]", "\(rows.map(\.version))::int8[]", "\(rows.map(\.updatedAt))::timestamptz[]",
            "\(rows.map(\.updatedBy))::text[]", "\(rows.map(\.isDelete))::bool[]", "\(rows.map { !$0.values.isEmpty })::bool[]",
        ]
        for column in table.columns.indices {
            arrays.append("\(rows.map { $0.values.isEmpty ? nil : $0.values[column] })::text[]")
        }
        let names: PGFragment = "id, version, updated_at, updated_by, is_delete, has_data, " + table.columns.map(\.name).joined(separator: ", ")
        let typed: PGFragment =
            "i.id, i.version, i.updated_at, i.updated_by, i.is_delete, i.has_data, "
            + table.columns.map { "i.\($0.name)::\($0.type) AS \($0.name)" as PGFragment }.joined(separator: ", ")
        return "SELECT \(typed), now() AS now FROM unnest(\(arrays.joined(separator: ", "))) AS i(\(names))"
    }

    /// The column of the input row `i` (`input` has cast it already).
    static func cast(_ column: SyncTable.Column) -> PGFragment {
        "i.\(column.name)"
    }

    static func columnList(_ table: SyncTable) -> PGFragment {
        table.columns.map(\.name).joined(separator: ", ")
    }

    static func castList(_ table: SyncTable) -> PGFragment {
        table.columns.map { cast($0) }.joined(separator: ", ")
    }

    /// `SET` of the data columns from the input row `i` over the stored row `h`: a row without
    /// data (a delete) keeps the stored data; a habit's createdAt defaults to the server time of
    /// the first write, then stays.
    static func dataAssignments(_ table: SyncTable) -> PGFragment {
        table.columns.map { column -> PGFragment in
            if column.declared.name == "created_at" && table.collection == .habits {
                return "created_at = CASE WHEN i.has_data THEN coalesce(i.created_at, h.created_at, i.now) ELSE h.created_at END"
            }
            return "\(column.name) = CASE WHEN i.has_data THEN \(cast(column)) ELSE h.\(column.name) END"
        }.joined(separator: ", ")
    }

    /// The data columns of a row inserted from the input row `i` (a habit's createdAt as above).
    static func insertValues(_ table: SyncTable) -> PGFragment {
        table.columns.map { column -> PGFragment in
            if column.declared.name == "created_at" && table.collection == .habits { return "CASE WHEN i.has_data THEN coalesce(i.created_at, i.now) END" }
            return cast(column)
        }.joined(separator: ", ")
    }

    /// Last writer wins: rows whose stored key `(updated_at, updated_by)` is older than the
    /// incoming one are overwritten (a delete keeps the data and sets the tombstone); ids the
    /// table has never seen are inserted. Two statements, the update first, to be sent in one
    /// pipeline; each returns the ids it wrote.
    static func lastWriterWins(_ table: SyncTable, tenant: UUID, user: String, rows: [SyncRow], extraCondition: PGFragment? = nil) -> [PGQuery] {
        let t = table.table
        let extra: PGFragment = extraCondition.map { " AND " + $0 } ?? ""
        let update: PGQuery = """
            WITH input AS (\(input(table, rows)))
            UPDATE \(t) h SET \(dataAssignments(table)),
                updated_at = i.updated_at, updated_by = i.updated_by, server_version = i.version, synced_at = i.now,
                deleted_at = CASE WHEN i.is_delete THEN i.now END
            FROM input i
            WHERE h.tenant_id = \(tenant) AND h.user_id = \(user) AND h.id = i.id
              AND (h.updated_at, h.updated_by COLLATE "C") < (i.updated_at, i.updated_by COLLATE "C")\(extra)
            RETURNING h.id
            """
        let insert: PGQuery = """
            WITH input AS (\(input(table, rows)))
            INSERT INTO \(t) AS w (tenant_id, user_id, id, \(columnList(table)), updated_at, updated_by, server_version, synced_at, deleted_at)
            SELECT owner.tenant_id, owner.user_id, i.id, \(insertValues(table)), i.updated_at, i.updated_by, i.version, i.now, CASE WHEN i.is_delete THEN i.now END
            FROM input i CROSS JOIN \(OwnerRow.relation(tenant: tenant, user: user))
            WHERE NOT EXISTS (SELECT 1 FROM \(t) h WHERE h.tenant_id = \(tenant) AND h.user_id = \(user) AND h.id = i.id OFFSET 0)
            RETURNING w.id
            """
        return [update, insert]
    }

    /// Append-only: ids not stored yet are inserted; stored ones are left alone (the caller
    /// compares them). Returns the ids inserted.
    static func appendOnly(_ table: SyncTable, tenant: UUID, user: String, rows: [SyncRow]) -> PGQuery {
        """
        WITH input AS (\(input(table, rows)))
        INSERT INTO \(table.table) AS w (tenant_id, user_id, id, \(columnList(table)), updated_at, updated_by, server_version, synced_at)
        SELECT owner.tenant_id, owner.user_id, i.id, \(castList(table)), i.updated_at, i.updated_by, i.version, i.now
        FROM input i CROSS JOIN \(OwnerRow.relation(tenant: tenant, user: user))
        WHERE NOT EXISTS (SELECT 1 FROM \(table.table) h WHERE h.tenant_id = \(tenant) AND h.user_id = \(user) AND h.id = i.id OFFSET 0)
        RETURNING w.id
        """
    }

    /// Append-only for usage events, first step: the ids not registered yet in
    /// `usage_event_ids` (one unpartitioned index) are registered. Returns those ids: only they
    /// are inserted (`appendRegistered`), since the events of an archived month are in the
    /// registry only.
    static func registerUsageEvents(_ table: SyncTable, tenant: UUID, user: String, rows: [SyncRow]) -> PGQuery {
        """
        WITH input AS (\(input(table, rows)))
        INSERT INTO usage_event_ids AS w (tenant_id, user_id, id, occurred_at, is_exit)
        SELECT owner.tenant_id, owner.user_id, i.id, i.occurred_at, i.event_type = 'exit_to_focus'
        FROM input i CROSS JOIN \(OwnerRow.relation(tenant: tenant, user: user))
        ON CONFLICT (tenant_id, user_id, id) DO NOTHING
        RETURNING w.id
        """
    }

    /// The ids the usage-event registry knows (stored, or archived), by one probe each.
    static func registered(tenant: UUID, user: String, ids: [UUID]) -> PGQuery {
        """
        SELECT r.id FROM unnest(\(ids)::uuid[]) AS k(id)
        CROSS JOIN LATERAL (SELECT id FROM usage_event_ids WHERE tenant_id = \(tenant) AND user_id = \(user) AND id = k.id OFFSET 0) r
        """
    }

    /// Second step: inserts the rows `registerUsageEvents` registered. Returns their ids.
    static func appendRegistered(_ table: SyncTable, tenant: UUID, user: String, rows: [SyncRow]) -> PGQuery {
        """
        WITH input AS (\(input(table, rows)))
        INSERT INTO \(table.table) AS w (tenant_id, user_id, id, \(columnList(table)), updated_at, updated_by, server_version, synced_at)
        SELECT owner.tenant_id, owner.user_id, i.id, \(castList(table)), i.updated_at, i.updated_by, i.version, i.now
        FROM input i CROSS JOIN \(OwnerRow.relation(tenant: tenant, user: user))
        RETURNING w.id
        """
    }

    /// `registerUsageEvents` and `appendRegistered` as one statement, for one node (Citus
    /// cannot send an `INSERT` inside a `WITH` to one worker): the events whose ids the registry
    /// did not know yet are registered and inserted, and nothing else. Returns their ids.
    ///
    /// `knownNew`: the prologue read the registry not to know any of them, under the user's lock
    /// (`PushPrefetch`), and the statement goes unread with the push's closing statements. No
    /// `ON CONFLICT` then: should a writer that does not take the lock have registered one
    /// meanwhile, the statement fails (23505, a data error) and the push is applied again on the
    /// slow path, which reads before it writes.
    static func registerAndAppendUsageEvents(_ table: SyncTable, tenant: UUID, user: String, rows: [SyncRow], knownNew: Bool = false) -> PGQuery {
        """
        WITH input AS (\(input(table, rows))),
        registered AS (
            INSERT INTO usage_event_ids AS r (tenant_id, user_id, id, occurred_at, is_exit)
            SELECT owner.tenant_id, owner.user_id, i.id, i.occurred_at, i.event_type = 'exit_to_focus'
            FROM input i CROSS JOIN \(OwnerRow.relation(tenant: tenant, user: user))
            \(knownNew ? "" : "ON CONFLICT (tenant_id, user_id, id) DO NOTHING" as PGFragment)
            RETURNING r.id)
        INSERT INTO \(table.table) AS w (tenant_id, user_id, id, \(columnList(table)), updated_at, updated_by, server_version, synced_at)
        SELECT owner.tenant_id, owner.user_id, i.id, \(castList(table)), i.updated_at, i.updated_by, i.version, i.now
        FROM input i JOIN registered n ON n.id = i.id CROSS JOIN \(OwnerRow.relation(tenant: tenant, user: user))
        RETURNING w.id
        """
    }

    /// Which incoming rows the table already holds exactly: the same tombstone state and, for
    /// a live row, every data column `IS NOT DISTINCT FROM` the incoming value. Decided by
    /// PostgreSQL on the stored columns, so a row stored under older rules still compares.
    /// The rows' `version` slot carries the change's index in the batch, which is returned.
    /// A usage event is looked up at its registered time (`registeredTime`).
    static func sameContent(_ table: SyncTable, tenant: UUID, user: String, rows: [SyncRow]) -> PGQuery {
        let stored = table.columns.map { "h.\($0.name)" as PGFragment }.joined(separator: ", ")
        let incoming = castList(table)
        let (registered, atItsTime) = registeredTime(table.collection, tenant: tenant, user: user, id: "i.id")
        return """
            WITH input AS (\(input(table, rows)))
            SELECT i.version AS change_index
            FROM input i \(registered)
            CROSS JOIN LATERAL (SELECT * FROM \(table.table) h WHERE h.tenant_id = \(tenant) AND h.user_id = \(user) AND h.id = i.id\(atItsTime) OFFSET 0) h
            WHERE (h.deleted_at IS NOT NULL) = i.is_delete
              AND (i.is_delete OR (\(stored)) IS NOT DISTINCT FROM (\(incoming)))
            """
    }

    /// For usage events, a lateral join `r` to the registry (`usage_event_ids`) and the
    /// condition that finds a stored event at its registered time: that prunes the monthly
    /// partitions to one and matches `(tenant_id, user_id, occurred_at)`. By id alone, a plan
    /// made without statistics read every partition through the `(tenant_id, user_id)` prefix
    /// of another index, the user's whole history; by the incoming time, a cast of the batch's
    /// text, the month's share of it (`PlansWithoutStatisticsTests`: 146,040 and 1,456 index
    /// rows fetched for two retried events of a user with 36,500, against at most 100). Empty
    /// for every other collection.
    static func registeredTime(_ collection: SyncCollection, tenant: UUID, user: String, id: PGFragment) -> (join: PGQuery, condition: PGFragment) {
        guard collection == .usageEvents else { return ("", "") }
        return (
            "CROSS JOIN LATERAL (SELECT occurred_at FROM usage_event_ids WHERE tenant_id = \(tenant) AND user_id = \(user) AND id = \(id) OFFSET 0) r",
            " AND h.occurred_at = r.occurred_at"
        )
    }

    /// The stored state of the rows whose ids are `ids`, as wire changes and records, for the
    /// results.
    ///
    /// Usage events are found at the time the registry holds for their id (`registeredTime`).
    static func current(
        _ collection: SyncCollection, tenant: UUID, user: String, ids: [UUID]
    ) -> PGQuery {
        // The lateral subquery returns whole rows (`s.h`, of the table's row type), which the
        // wire JSON's record functions take.
        let h: PGFragment = "(s.h)"
        let (registered, atItsTime) = registeredTime(collection, tenant: tenant, user: user, id: "k.id")
        return """
            SELECT \(h).id, \(h).updated_at, \(h).updated_by, \(h).deleted_at IS NOT NULL AS deleted,
                   \(h).server_version, \(WireChangeSQL.change(collection, alias: h))::text AS change,
                   \(collection == .focusSessions ? "(s.h).state" : "NULL::text" as PGFragment) AS focus_state
            FROM unnest(\(ids)::uuid[]) AS k(id)
            \(registered)
            CROSS JOIN LATERAL (SELECT h FROM \(PGFragment.identifier(collection.table)) h
                                WHERE h.tenant_id = \(tenant) AND h.user_id = \(user) AND h.id = k.id\(atItsTime) OFFSET 0) s
            """
    }
}
