import Foundation
import GRDB
import HabitSyncDomain

/// A rolling window (docs/client.md, "A new phone: the main screen first"): the device keeps dated
/// records (daily progress, XP, focus sessions, usage events) from a day on, the server sends
/// none older, and records that leave the window are dropped here only — not deleted on the
/// server, and not counted by the digests, which the server computes over the same window.
extension LocalStore {
    /// The first day of the window the last pull used; nil: the whole history.
    public func historyFrom() throws -> LocalDate? {
        try database.read { try LocalSchema.state($0, "history_from").flatMap(LocalDate.init) }
    }

    /// Sets the window for the next pull. A window that starts earlier than the one pulled
    /// with (or none after one) starts the pull over: the records in between were never sent.
    public func setHistoryFrom(_ date: LocalDate?) throws {
        try database.write { db in
            let held = try LocalSchema.state(db, "history_from").flatMap(LocalDate.init)
            guard held != date else { return }
            if let held, date.map({ $0 < held }) ?? true { try LocalSchema.startPullOver(db) }
            if let date {
                try LocalSchema.setState(db, "history_from", date.description)
            } else {
                try db.execute(sql: "DELETE FROM sync_state WHERE key = 'history_from'")
            }
        }
    }

    /// Drops synced records dated before `date` (those with an edit the server has not
    /// settled stay until it has), one statement per dated collection. Returns how many went.
    @discardableResult
    public func dropHistory(before date: LocalDate) throws -> Int {
        try database.write { db in
            var dropped = 0
            for collection in SyncCollection.allCases where DatedHistory.dating(of: collection) != nil {
                let rows = try Row.fetchAll(
                    db, sql: "SELECT id, record FROM records WHERE collection = ? AND sync_status = 'synced' AND record IS NOT NULL", arguments: [collection.rawValue])
                let leaving = rows.filter { Self.isDated(before: date, collection: collection, recordText: $0["record"]) }.map { $0["id"] as String }
                guard !leaving.isEmpty else { continue }
                try db.execute(sql: LocalSchema.dropSyncedRecords, arguments: [collection.rawValue, String(decoding: try JSONEncoder().encode(leaving), as: UTF8.self)])
                dropped += db.changesCount
            }
            return dropped
        }
    }

    /// Whether a stored record (its fields as JSON text) is dated before `date`, by the
    /// server's rule (`DatedHistory`); a record that is not dated, or not readable, is not.
    static func isDated(before date: LocalDate, collection: SyncCollection, recordText: String?) -> Bool {
        guard let recordText, case .object(let fields)? = try? JSONParser.parse(bytes: Array(recordText.utf8)) else { return false }
        return !DatedHistory.isOnOrAfter(date, collection: collection, record: fields)
    }

    /// The phase of the store's pull (`PullProgress.Phase`); nil before its first page.
    public func syncPhase() throws -> PullProgress.Phase? {
        try database.read { try LocalSchema.state($0, "sync_phase").flatMap(PullProgress.Phase.init(rawValue:)) }
    }
}
