import Foundation
import GRDB
import HabitSyncDomain

/// The store's tables and the statements that keep them, versioned like the server's
/// migrations (GRDB's migrator records which have run).
enum LocalSchema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1 records, outbox, pending batch") { db in
            try db.execute(sql: """
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
        return migrator
    }

    static let upsertLocalEdit = """
        INSERT INTO records (collection, id, record, updated_at_ms, updated_by, sync_status)
        VALUES (?, ?, ?, ?, ?, 'pending')
        ON CONFLICT (collection, id) DO UPDATE SET record = excluded.record, updated_at_ms = excluded.updated_at_ms,
            updated_by = excluded.updated_by, sync_status = 'pending', failure_code = NULL, failure_field = NULL, failure_message = NULL
        """

    static let enqueue = """
        INSERT INTO outbox (collection, id, sequence) VALUES (?, ?, ?)
        ON CONFLICT (collection, id) DO UPDATE SET sequence = excluded.sequence
        """

    static func state(_ db: Database, _ key: String) throws -> String? {
        try String.fetchOne(db, sql: "SELECT value FROM sync_state WHERE key = ?", arguments: [key])
    }

    static func setState(_ db: Database, _ key: String, _ value: String) throws {
        try db.execute(sql: "INSERT INTO sync_state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
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
