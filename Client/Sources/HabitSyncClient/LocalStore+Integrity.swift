import Foundation
import GRDB
import HabitSyncDomain

/// Keeping the device on the server's timeline (docs/client.md, "When the server's history
/// changes"): the epoch it syncs in, what it does when the server says that changed, and the
/// digests it checks its copy against.
extension LocalStore {
    /// The epoch of the server's last answer; nil before the first.
    public func syncEpoch() throws -> String? {
        try database.read { try LocalSchema.state($0, "sync_epoch") }
    }

    static func noteEpoch(_ db: Database, _ epoch: String?) throws {
        guard let epoch else { return }
        try LocalSchema.setState(db, "sync_epoch", epoch)
    }

    /// The server holds this user's records up to `highWaterMark` only (`410 reset_required`:
    /// a backup was restored). Every record held above it (or never given a version) goes back
    /// into the outbox as a whole record — tombstones as deletes, progress counts as absolute
    /// values, since the server lost the additions they summed — with the edits already
    /// there. The batch that was out is rebuilt (it carries the old epoch), and the next pull
    /// starts from scratch. Returns how many records were queued again.
    @discardableResult
    public func prepareRepush(highWaterMark: Int64, epoch: String?) throws -> Int {
        try database.write { db in
            try db.execute(sql: LocalSchema.sendBatchEntriesWhole)
            try db.execute(sql: "DELETE FROM pending_batch")
            let base = try LocalSchema.state(db, "outbox_sequence").flatMap(Int64.init) ?? 0
            try db.execute(sql: LocalSchema.enqueueHeldAbove, arguments: [base, highWaterMark])
            let queued = db.changesCount
            try LocalSchema.setState(db, "outbox_sequence", String(base + Int64(queued)))
            try db.execute(sql: LocalSchema.markQueuedAfterPendingWhole, arguments: [base])
            try LocalSchema.startPullOver(db)
            try Self.noteEpoch(db, epoch)
            return queued
        }
    }

    /// Whether this device has never heard from the server: no epoch, no cursor, no record the
    /// server gave a version. Everything it holds was made here and never stored by the server,
    /// so an account that started over (`410 account_restarted` to a push without an epoch)
    /// erased nothing of it: `adoptEpoch` keeps it and sends it again.
    public func hasNeverSynced() throws -> Bool {
        try database.read { db in
            try LocalSchema.state(db, "sync_epoch") == nil && LocalSchema.state(db, "pull_cursor") == nil
                && (try Int.fetchOne(db, sql: "SELECT count(*) FROM records WHERE server_version IS NOT NULL") ?? 0) == 0
        }
    }

    /// A device that never synced learned the account's epoch (`410 account_restarted` to its
    /// first push): the batch that was out is rebuilt to carry it, and nothing is discarded.
    public func adoptEpoch(_ epoch: String?) throws {
        try database.write { db in
            try db.execute(sql: LocalSchema.sendBatchEntriesWhole)
            try db.execute(sql: "DELETE FROM pending_batch")
            try Self.noteEpoch(db, epoch)
        }
    }

    /// The account this device synced with was erased and started over (`410
    /// account_restarted`): everything of the old account goes, pending edits too, and none
    /// of it is pushed. Returns how many records were discarded.
    @discardableResult
    public func discardAccount(epoch: String?) throws -> Int {
        try database.write { db in
            let discarded = try Int.fetchOne(db, sql: "SELECT count(*) FROM records") ?? 0
            for table in ["pending_batch", "outbox", "records"] { try db.execute(sql: "DELETE FROM \(table)") }
            try db.execute(sql: "DELETE FROM sync_state WHERE key NOT IN ('account', 'outbox_sequence', 'newest_seen_ms')")
            try Self.noteEpoch(db, epoch)
            return discarded
        }
    }

    /// The collections of `server` (a last page's digests) whose synced records here differ
    /// from the server's. A collection with a record waiting for the server (pending or
    /// failed) is not compared: the server's copy of it is not this device's yet. With a
    /// window (`historyFrom`, as the page echoed it), dated records before it are not counted,
    /// as the server does not count them.
    public func mismatchedDigests(_ server: [SyncCollection: RecordDigest], window: LocalDate? = nil) throws -> [SyncCollection] {
        try database.read { db in
            let unsettled = Set(try String.fetchAll(db, sql: LocalSchema.unsettledCollections))
            var local: [SyncCollection: RecordDigest] = [:]
            let rows = try Row.fetchCursor(db, sql: "SELECT collection, id, server_version, record FROM records WHERE record IS NOT NULL AND sync_status = 'synced'")
            while let row = try rows.next() {
                guard let collection = SyncCollection(rawValue: row["collection"]), server[collection] != nil else { continue }
                if let window, DatedHistory.dating(of: collection) != nil,
                    Self.isDated(before: window, collection: collection, recordText: row["record"])
                {
                    continue
                }
                guard let id = UUID(uuidString: row["id"]), let version = row["server_version"] as Int64? else {
                    local[collection, default: RecordDigest()].count += 1  // no version: cannot match the server's term
                    continue
                }
                local[collection, default: RecordDigest()].add(id: id, serverVersion: version)
            }
            return server.keys.filter { !unsettled.contains($0.rawValue) && (local[$0] ?? RecordDigest()) != server[$0] }
                .sorted { $0.rawValue < $1.rawValue }
        }
    }
}
