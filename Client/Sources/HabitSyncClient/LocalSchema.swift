import Foundation
import GRDB
import HabitSyncDomain

/// The store's tables and the statements that keep them, versioned like the server's
/// migrations (GRDB's migrator records which have run).
enum LocalSchema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1 records, outbox, pending batch") { db in
            try db.execute(
                sql: """
                    CREATE TABLE records (
                        collection TEXT NOT NULL,
                        id TEXT NOT NULL,
                        record TEXT,                       -- the fields as JSON; NULL for a tombstone
                        updated_at_ms INTEGER NOT NULL,
                        updated_by TEXT NOT NULL,
                        sync_status TEXT NOT NULL CHECK (sync_status IN ('synced', 'pending', 'failed')),
                        last_synced_at_ms INTEGER,
                        server_version INTEGER,
                        failure_code TEXT,
                        failure_field TEXT,
                        failure_message TEXT,
                        PRIMARY KEY (collection, id)
                    );
                    -- One entry per record with an unconfirmed edit; sequence orders the edits and
                    -- tells whether a record was edited again while its batch was out.
                    CREATE TABLE outbox (
                        collection TEXT NOT NULL,
                        id TEXT NOT NULL,
                        sequence INTEGER NOT NULL UNIQUE,
                        PRIMARY KEY (collection, id)
                    );
                    -- The batch being sent: persisted before it is sent, sent byte for byte again
                    -- until the server answers.
                    CREATE TABLE pending_batch (
                        batch_id TEXT PRIMARY KEY,
                        body BLOB NOT NULL
                    );
                    CREATE TABLE pending_batch_entries (
                        batch_id TEXT NOT NULL REFERENCES pending_batch (batch_id) ON DELETE CASCADE,
                        position INTEGER NOT NULL,
                        collection TEXT NOT NULL,
                        id TEXT NOT NULL,
                        sequence INTEGER NOT NULL,
                        PRIMARY KEY (batch_id, position)
                    );
                    CREATE TABLE sync_state (
                        key TEXT PRIMARY KEY,
                        value TEXT NOT NULL
                    );
                    """)
        }
        migrator.registerMigration("v2 progress by day, resync marks") { db in
            try db.execute(
                sql: """
                    -- A habit's progress of one day, found without reading the user's history.
                    CREATE INDEX records_progress_of_day ON records (lower(json_extract(record, '$.habitId')), json_extract(record, '$.date'))
                        WHERE collection = 'dailyProgress';
                    -- Set on every synced record when a pull without a cursor begins; cleared on
                    -- each record it brings. What is still marked when it ends was deleted on the
                    -- server (tombstone purged, or older than the pull): the device drops it.
                    ALTER TABLE records ADD COLUMN awaiting_resync INTEGER NOT NULL DEFAULT 0;
                    """)
        }
        migrator.registerMigration("v3 progress increments") { db in
            try db.execute(
                sql: """
                    -- A dailyProgress record's count change not yet in a batch: what the user added
                    -- (negative: took away) since the server last acknowledged it, sent as the
                    -- change's increment. NULL: the count is sent as an absolute value (a set), or
                    -- the record is not a progress record with a pending edit.
                    ALTER TABLE records ADD COLUMN pending_increment INTEGER;
                    """)
        }
        migrator.registerMigration("v4 changed fields") { db in
            try db.execute(
                sql: """
                    -- A record that merges field by field (habits, reminders, selectedApps,
                    -- userSettings) with an edit not yet in a batch: the fields the user changed,
                    -- each with the time of its change ({"name": 1795162530123}), sent as only those
                    -- fields with their fieldTimes. NULL: the record is sent whole (a new record, one
                    -- the server refused, another collection) or has no pending edit.
                    ALTER TABLE records ADD COLUMN pending_fields TEXT;
                    """)
        }
        return migrator
    }

    /// Forgets the pull cursor: the next pull starts over from scratch (its first page marks
    /// the synced records, `markForResync`).
    static func startPullOver(_ db: Database) throws {
        try db.execute(sql: "DELETE FROM sync_state WHERE key = 'pull_cursor'")
    }

    /// Every synced record without a pending edit, when the first page of a pull without a
    /// cursor is stored; `dropUnseenAfterResync` drops those its last page leaves marked.
    static let markForResync = """
        UPDATE records SET awaiting_resync = 1
        WHERE sync_status = 'synced' AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.collection = records.collection AND o.id = records.id)
        """

    static let dropUnseenAfterResync = """
        DELETE FROM records
        WHERE awaiting_resync = 1 AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.collection = records.collection AND o.id = records.id)
        """

    /// Synced records of a collection (`?1`) whose ids are in a JSON array (`?2`), without a
    /// pending edit: those that left the device's window.
    static let dropSyncedRecords = """
        DELETE FROM records
        WHERE collection = ?1 AND id IN (SELECT value FROM json_each(?2))
          AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.collection = records.collection AND o.id = records.id)
        """

    static let progressOfDay = """
        SELECT * FROM records
        WHERE collection = 'dailyProgress' AND lower(json_extract(record, '$.habitId')) = ? AND json_extract(record, '$.date') = ?
        """

    static let upsertLocalEdit = """
        INSERT INTO records (collection, id, record, updated_at_ms, updated_by, sync_status)
        VALUES (?, ?, ?, ?, ?, 'pending')
        ON CONFLICT (collection, id) DO UPDATE SET record = excluded.record, updated_at_ms = excluded.updated_at_ms,
            updated_by = excluded.updated_by, sync_status = 'pending', failure_code = NULL, failure_field = NULL, failure_message = NULL,
            awaiting_resync = 0
        """

    /// Records a count change of a progress record being edited (`isPendingSet`: it already
    /// waits to be sent as an absolute value, which this change then joins).
    static let addPendingIncrement = """
        UPDATE records SET pending_increment = CASE WHEN ? THEN NULL ELSE coalesce(pending_increment, 0) + ? END
        WHERE collection = ? AND id = ?
        """

    static let resetIncrementsInBatch = """
        UPDATE records SET pending_increment = 0
        WHERE pending_increment IS NOT NULL
          AND EXISTS (SELECT 1 FROM pending_batch_entries e WHERE e.batch_id = ? AND e.collection = records.collection AND e.id = records.id)
        """

    static let clearPendingIncrement = "UPDATE records SET pending_increment = NULL WHERE collection = ? AND id = ?"

    static let setPendingFields = "UPDATE records SET pending_fields = ? WHERE collection = ? AND id = ?"

    /// The batch carries the changed fields now; what the user changes meanwhile is collected
    /// anew (a record sent whole is from then on edited by field too).
    static let resetFieldsInBatch = """
        UPDATE records SET pending_fields = '{}'
        WHERE record IS NOT NULL AND collection IN (\(SyncCollection.allCases.filter(\.mergesByField).map { "'\($0.rawValue)'" }.joined(separator: ", ")))
          AND EXISTS (SELECT 1 FROM pending_batch_entries e WHERE e.batch_id = ? AND e.collection = records.collection AND e.id = records.id)
        """

    /// The records of the batch that was out go back to being sent whole: the increments and
    /// fields it carried were taken out of them when it was built.
    static let sendBatchEntriesWhole = """
        UPDATE records SET pending_increment = NULL, pending_fields = NULL
        WHERE EXISTS (SELECT 1 FROM pending_batch_entries e WHERE e.collection = records.collection AND e.id = records.id)
        """

    /// Queues the synced records a restored server may lack — above its high-water mark (the
    /// second argument), or never given a version — after the outbox sequence the first
    /// argument names, oldest edit first. Derived records are the server's to make again.
    static let enqueueHeldAbove = """
        INSERT INTO outbox (collection, id, sequence)
        SELECT collection, id, ? + row_number() OVER (ORDER BY updated_at_ms, collection, id) FROM records
        WHERE sync_status = 'synced' AND (server_version IS NULL OR server_version > ?)
          AND collection NOT IN (\(SyncCollection.allCases.filter { $0.kind == .derived }.map { "'\($0.rawValue)'" }.joined(separator: ", ")))
          AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.collection = records.collection AND o.id = records.id)
        """

    /// The records `enqueueHeldAbove` queued (sequences after the argument) wait to be sent whole.
    static let markQueuedAfterPendingWhole = """
        UPDATE records SET sync_status = 'pending', pending_increment = NULL, pending_fields = NULL
        WHERE EXISTS (SELECT 1 FROM outbox o WHERE o.collection = records.collection AND o.id = records.id AND o.sequence > ?)
        """

    /// Collections with a record the server's copy does not match yet.
    static let unsettledCollections = """
        SELECT DISTINCT collection FROM records WHERE sync_status <> 'synced'
        UNION SELECT collection FROM outbox
        """

    static let enqueue = """
        INSERT INTO outbox (collection, id, sequence) VALUES (?, ?, ?)
        ON CONFLICT (collection, id) DO UPDATE SET sequence = excluded.sequence
        """

    static func state(_ db: Database, _ key: String) throws -> String? {
        try String.fetchOne(db, sql: "SELECT value FROM sync_state WHERE key = ?", arguments: [key])
    }

    static func setState(_ db: Database, _ key: String, _ value: String) throws {
        try db.execute(
            sql: "INSERT INTO sync_state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            arguments: [key, value])
    }

    /// The newest `updatedAt` this device has seen, its own writes and the server's alike.
    static func newestSeen(_ db: Database) throws -> Date? {
        try state(db, "newest_seen_ms").flatMap(Int64.init).map { Date(timeIntervalSince1970: Double($0) / 1000) }
    }

    static func noteSeen(_ db: Database, _ time: Date) throws {
        let milliseconds = WireTime.milliseconds(time)
        if let seen = try state(db, "newest_seen_ms").flatMap(Int64.init), seen >= milliseconds { return }
        try setState(db, "newest_seen_ms", String(milliseconds))
    }

    static func nextSequence(_ db: Database) throws -> Int64 {
        let next = (try state(db, "outbox_sequence").flatMap(Int64.init) ?? 0) + 1
        try setState(db, "outbox_sequence", String(next))
        return next
    }
}
