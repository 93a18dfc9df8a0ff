import Foundation
import GRDB
import HabitSyncDomain

/// The pull's side: the cursor, and pulled changes stored as the synced state.
extension LocalStore {
    /// The cursor of the last page stored; nil before the first pull and after a `410`.
    public func pullCursor() throws -> String? {
        try database.read { try LocalSchema.state($0, "pull_cursor") }
    }

    /// Forgets the cursor (the server answered `410 cursor_expired`): the next pull starts
    /// over. Pending edits stay pending; synced records the fresh pull does not bring again
    /// were deleted on the server (their tombstones are gone) and are dropped when it ends.
    public func resetPullCursor() throws {
        try database.write { try LocalSchema.startPullOver($0) }
    }

    /// Marks every synced record before a page is pulled without a cursor (a device's first
    /// pull, or one starting over): such a pull leaves out the tombstones of records deleted
    /// before it began, so what it does not bring again is dropped when it ends — also what
    /// this device pushed before it began, which another device may have deleted since.
    public func prepareToPullFromScratch() throws {
        try database.write { try $0.execute(sql: LocalSchema.markForResync) }
    }

    /// Stores a pulled page and its cursor in one transaction. A record with a pending local
    /// edit keeps it: the edit's push settles it (applied, or superseded with the winner),
    /// so a pulled change never silently replaces an edit the server has not seen.
    /// `isLast` (the page said `hasMore: false`) ends a pull that began without a cursor: the
    /// marked records it did not bring are dropped. Returns how many changes were stored.
    @discardableResult
    public func storePulledPage(changes: [[String: JSONValue]], cursor: String, isLast: Bool = false) throws -> Int {
        let syncedAt = WireTime.milliseconds(now())
        return try database.write { db in
            var stored = 0
            for fields in changes {
                guard let change = ServerChange(fields) else { throw SyncProtocolError.malformedResponse }
                try LocalSchema.noteSeen(db, change.updatedAt)
                let pending = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM outbox WHERE collection = ? AND id = ?)",
                                                arguments: [change.collection.rawValue, Self.key(change.id)]) ?? false
                if pending { continue }
                try Self.adopt(db, change, syncedAt: syncedAt)
                stored += 1
            }
            try LocalSchema.setState(db, "pull_cursor", cursor)
            if isLast { try db.execute(sql: LocalSchema.dropUnseenAfterResync) }
            return stored
        }
    }
}
