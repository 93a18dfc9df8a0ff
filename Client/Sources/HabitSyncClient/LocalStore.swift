import Foundation
import GRDB
import HabitSyncDomain

/// The device's copy of its user's records, in one SQLite file: every collection the protocol
/// syncs, each record with its sync status fields, and an outbox holding one entry per record
/// with an edit the server has not confirmed (edits of one record coalesce: the next batch
/// sends the record as it is then).
///
/// Writes are validated with the server's own rules (`HabitSyncDomain`) before they are
/// stored, and stamped with the clock rule (`SyncClock`).
public final class LocalStore: Sendable {
    let database: DatabaseQueue
    public let deviceID: String
    let now: @Sendable () -> Date

    /// - Parameters:
    ///   - path: the SQLite file; nil keeps the store in memory (tests, previews).
    ///   - account: the signed-in user the file belongs to. A file first opened for one account
    ///     refuses to open for another (`LocalStoreError.otherAccount`): one user's records,
    ///     cursor and outbox never reach another user's server account.
    public init(path: String?, deviceID: String, account: String? = nil, now: @escaping @Sendable () -> Date = { Date() }) throws {
        database = try path.map { try DatabaseQueue(path: $0) } ?? DatabaseQueue()
        self.deviceID = deviceID
        self.now = now
        try LocalSchema.migrator.migrate(database)
        if let account {
            try database.write { db in
                guard let owner = try LocalSchema.state(db, "account") else { return try LocalSchema.setState(db, "account", account) }
                if owner != account { throw LocalStoreError.otherAccount }
            }
        }
    }

    /// Deletes a store's file (sign-out that forgets the device's data). Close every
    /// `LocalStore` of it first.
    public static func erase(path: String) throws {
        for file in [path, path + "-wal", path + "-shm", path + "-journal"] where FileManager.default.fileExists(atPath: file) {
            try FileManager.default.removeItem(atPath: file)
        }
    }

    // MARK: - Local edits

    /// Validates `fields` as a record of `collection` and saves it as a pending edit.
    /// Throws `ChangeRejection` (the server's codes and fields) or `LocalStoreError`.
    ///
    /// A `dailyProgress` record's count is sent as what changed: the difference to the count
    /// the record had (0 for a new record), added on the server to what other devices added
    /// meanwhile. With `settingCount` it is sent as an absolute value instead, which replaces
    /// the count (last writer wins; additions made after it still add on top).
    @discardableResult
    public func save(_ collection: SyncCollection, id: UUID = UUID(), fields: [String: JSONValue], settingCount: Bool = false) throws -> LocalRecord {
        if collection.kind == .derived { throw LocalStoreError.derivedCollection }
        let context = ValidationContext.standalone(now: now())
        let validated = try ValidatedRecord.validate(collection, fields, context: context)
        let json = JSONValue.object(fields).jsonText
        return try database.write { db in
            if collection.kind != .lastWriterWins, let existing = try Self.fetch(db, collection, id), existing.syncStatus != .failed {
                // Append-only and insert-once records are written once; saving the same again is
                // harmless. One the server refused may be corrected.
                guard existing.recordJSON == json else { throw LocalStoreError.immutableRecord }
                return existing
            }
            let existing = try Self.fetch(db, collection, id)
            var countChange = CountChange.none
            if collection == .dailyProgress {
                countChange = settingCount ? .set : .add(Self.count(fields) - (existing?.fields.map(Self.count) ?? 0))
            }
            var changedFields: Set<String>?
            if collection.mergesByField, let existing, let before = existing.fields, existing.syncStatus != .failed,
                let changed = Self.changedFields(collection, from: before, to: fields, saving: validated, context: context)
            {
                // Only what the user changed is sent, so another device's edit of another field stays.
                if changed.isEmpty { return existing }
                changedFields = changed
            }
            try self.writeLocalEdit(db, collection, id, json: json, countChange: countChange, changedFields: changedFields)
            return try Self.fetch(db, collection, id) ?? { throw LocalStoreError.corruptRow }()
        }
    }

    /// Deletes a record of a last-writer-wins collection: a pending tombstone.
    public func delete(_ collection: SyncCollection, id: UUID) throws {
        guard collection.kind == .lastWriterWins else {
            throw collection.kind == .derived ? LocalStoreError.derivedCollection : LocalStoreError.immutableRecord
        }
        try database.write { db in try self.writeLocalEdit(db, collection, id, json: nil) }
    }

    /// Gives up a failed edit: the record goes back to the server's version (by a pull from
    /// scratch when the server has one; a record the server never had just goes).
    public func discardFailedEdit(_ collection: SyncCollection, id: UUID) throws {
        try database.write { db in
            guard let record = try Self.fetch(db, collection, id), record.syncStatus == .failed else { return }
            try db.execute(sql: "DELETE FROM records WHERE collection = ? AND id = ?", arguments: [collection.rawValue, Self.key(id)])
            if record.serverVersion != nil { try LocalSchema.startPullOver(db) }
        }
    }

    /// How an edit changes a progress record's count, for the next batch.
    enum CountChange {
        /// Not a count (another collection, a delete): the record is sent whole.
        case none
        /// An absolute value.
        case set
        /// An increment (or decrement).
        case add(Int)
    }

    /// The fields whose value differs, compared as the server stores them (a field left out is
    /// null, but a `createdAt` left out is the server's to keep); nil when the record as it was
    /// does not pass today's rules (it is then sent whole).
    static func changedFields(
        _ collection: SyncCollection, from before: [String: JSONValue], to after: [String: JSONValue],
        saving new: ValidatedRecord, context: ValidationContext
    ) -> Set<String>? {
        guard let old = try? ValidatedRecord.validate(collection, before, context: context), let was = CanonicalFields.of(old),
            let now = CanonicalFields.of(new)
        else { return nil }
        return Set(was.keys).union(now.keys).filter { field in
            if field == "createdAt", after[field] == nil || after[field] == .null { return false }
            return (was[field] ?? .null).jsonText != (now[field] ?? .null).jsonText
        }
    }

    static func count(_ fields: [String: JSONValue]) -> Int {
        guard case .number(let value)? = fields["progressCount"], value.isFinite, abs(value) < 1e15 else { return 0 }
        return Int(value)
    }

    /// `changedFields`: the fields an edit of a record that merges by field changed (nil: it is
    /// sent whole, unless it already waits to be sent by field).
    private func writeLocalEdit(
        _ db: Database, _ collection: SyncCollection, _ id: UUID, json: String?, countChange: CountChange = .none,
        changedFields: Set<String>? = nil
    ) throws {
        let updatedAt = SyncClock.nextUpdatedAt(now: now(), newestSeen: try LocalSchema.newestSeen(db))
        // Whether the record waits to be sent as a set: an addition then joins that set.
        let pendingSet =
            try Bool.fetchOne(
                db,
                sql: """
                    SELECT EXISTS (SELECT 1 FROM outbox o JOIN records r ON r.collection = o.collection AND r.id = o.id
                                   WHERE o.collection = ? AND o.id = ? AND r.pending_increment IS NULL)
                    """, arguments: [collection.rawValue, Self.key(id)]) ?? false
        try db.execute(
            sql: LocalSchema.upsertLocalEdit,
            arguments: [
                collection.rawValue, Self.key(id), json, WireTime.milliseconds(updatedAt), deviceID,
            ])
        switch countChange {
        case .none, .set:
            try db.execute(sql: LocalSchema.clearPendingIncrement, arguments: [collection.rawValue, Self.key(id)])
        case .add(let delta):
            try db.execute(sql: LocalSchema.addPendingIncrement, arguments: [pendingSet, delta, collection.rawValue, Self.key(id)])
        }
        try db.execute(
            sql: LocalSchema.setPendingFields,
            arguments: [
                try Self.pendingFields(db, collection, id, adding: json == nil ? nil : changedFields, at: updatedAt), collection.rawValue, Self.key(id),
            ])
        try LocalSchema.noteSeen(db, updatedAt)
        try db.execute(sql: LocalSchema.enqueue, arguments: [collection.rawValue, Self.key(id), try LocalSchema.nextSequence(db)])
    }

    /// The record's pending fields after an edit that changed `fields` at `time` (the latest
    /// change of each field counts); nil, the record is sent whole.
    private static func pendingFields(_ db: Database, _ collection: SyncCollection, _ id: UUID, adding fields: Set<String>?, at time: Date) throws -> String? {
        guard let fields else { return nil }
        let row = try Row.fetchOne(
            db,
            sql: """
                SELECT pending_fields, EXISTS (SELECT 1 FROM outbox o WHERE o.collection = r.collection AND o.id = r.id) AS queued
                FROM records r WHERE collection = ? AND id = ?
                """, arguments: [collection.rawValue, key(id)])
        let text: String? = row?["pending_fields"]
        // Waiting to be sent whole (the server may not have it yet): it still is.
        if text == nil, row?["queued"] == true { return nil }
        var pending: [String: JSONValue] = [:]
        if let text, case .object(let stored)? = try? JSONParser.parse(bytes: Array(text.utf8)) { pending = stored }
        for field in fields { pending[field] = .number(Double(WireTime.milliseconds(time))) }
        return JSONValue.object(pending).jsonText
    }

    // MARK: - Reading

    public func record(_ collection: SyncCollection, id: UUID) throws -> LocalRecord? {
        try database.read { try Self.fetch($0, collection, id) }
    }

    /// The live records of `collection` (tombstones left out unless asked for), by id.
    public func records(_ collection: SyncCollection, includingDeleted: Bool = false) throws -> [LocalRecord] {
        try database.read { try Self.fetchAll($0, collection, includingDeleted: includingDeleted) }
    }

    /// The records of `collection` now and after every change, for a view to follow.
    public func observe(_ collection: SyncCollection, includingDeleted: Bool = false) -> AsyncThrowingStream<[LocalRecord], any Error> {
        observation { try Self.fetchAll($0, collection, includingDeleted: includingDeleted) }
    }

    /// GRDB's observation of `fetch` in a standard library type: an app that follows the store
    /// needs no `import GRDB` (with `MemberImportVisibility`, iterating GRDB's own sequence
    /// does). A view wants the newest state, so only that is kept while it is busy.
    func observation<Value: Sendable>(_ fetch: @escaping @Sendable (Database) throws -> Value) -> AsyncThrowingStream<Value, any Error> {
        let values = ValueObservation.tracking(fetch).values(in: database)
        return AsyncThrowingStream(bufferingPolicy: .bufferingNewest(1)) { continuation in
            let follower = Task {
                do {
                    for try await value in values { continuation.yield(value) }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in follower.cancel() }
        }
    }

    /// How many records have an edit waiting for the server.
    public func pendingCount() throws -> Int {
        try database.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM outbox") ?? 0 }
    }

    static func key(_ id: UUID) -> String { id.uuidString.lowercased() }

    static func fetch(_ db: Database, _ collection: SyncCollection, _ id: UUID) throws -> LocalRecord? {
        try Row.fetchOne(db, sql: "SELECT * FROM records WHERE collection = ? AND id = ?", arguments: [collection.rawValue, key(id)])
            .map(LocalRecord.init(row:))
    }

    static func fetchAll(_ db: Database, _ collection: SyncCollection, includingDeleted: Bool) throws -> [LocalRecord] {
        try Row.fetchAll(
            db, sql: "SELECT * FROM records WHERE collection = ? AND (? OR record IS NOT NULL) ORDER BY id",
            arguments: [collection.rawValue, includingDeleted]
        ).map(LocalRecord.init(row:))
    }
}
