import Foundation
import GRDB
import HabitSyncDomain

/// The pull's side: the cursor, and pulled changes stored as the synced state.
extension LocalStore {
    /// The cursor of the last page stored; nil before the first pull and after a `410`
    /// (`cursor_expired`, `reset_required`, `account_restarted`) or a digest mismatch.
    public func pullCursor() throws -> String? {
        try database.read { try LocalSchema.state($0, "pull_cursor") }
    }

    /// Forgets the cursor (the server answered `410 cursor_expired`): the next pull starts
    /// over from scratch. Pending edits stay pending.
    public func resetPullCursor() throws {
        try database.write { try LocalSchema.startPullOver($0) }
    }

    /// Stores a pulled page and its cursor in one transaction. A record with a pending local
    /// edit keeps it: the edit's push settles it (applied, or superseded with the winner),
    /// so a pulled change never silently replaces an edit the server has not seen.
    ///
    /// A pull without a cursor (the device's first, or one starting over) is the whole state:
    /// the server leaves out the tombstones of records deleted before it began. So its first
    /// page (no cursor stored yet) marks every synced record, each record pulled clears its
    /// mark, and `isLast` (the page said `hasMore: false`) drops what is still marked — also
    /// records this device pushed before that pull, which another device may have deleted
    /// since. `phase` is where the pull stands after this page (`syncPhase()`). Returns how
    /// many changes were stored.
    @discardableResult
    public func storePulledPage(
        changes: [[String: JSONValue]], cursor: String, isLast: Bool = false, epoch: String? = nil, phase: PullProgress.Phase? = nil
    ) throws -> Int {
        let syncedAt = WireTime.milliseconds(now())
        return try database.write { db in
            if try LocalSchema.state(db, "pull_cursor") == nil { try db.execute(sql: LocalSchema.markForResync) }
            var stored = 0
            for fields in changes {
                guard let change = ServerChange(fields) else { throw SyncProtocolError.malformedResponse }
                try LocalSchema.noteSeen(db, change.updatedAt)
                let pending =
                    try Bool.fetchOne(
                        db, sql: "SELECT EXISTS (SELECT 1 FROM outbox WHERE collection = ? AND id = ?)",
                        arguments: [change.collection.rawValue, Self.key(change.id)]) ?? false
                if pending { continue }
                try Self.adopt(db, change, syncedAt: syncedAt)
                stored += 1
            }
            try LocalSchema.setState(db, "pull_cursor", cursor)
            try Self.noteEpoch(db, epoch)
            if let phase { try LocalSchema.setState(db, "sync_phase", phase.rawValue) }
            if isLast { try db.execute(sql: LocalSchema.dropUnseenAfterResync) }
            return stored
        }
    }
}
