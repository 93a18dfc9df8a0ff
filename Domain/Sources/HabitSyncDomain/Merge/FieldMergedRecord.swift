import Foundation

/// How one batch's changes to one record of a collection that merges field by field
/// (`SyncCollection.mergesByField`) settle against the stored record. Pure; the store reads the
/// record, folds the batch's changes into it in batch order, and writes what this says.
///
/// - An upsert changes the fields it carries (a field sent as `null` is cleared; a field not
///   sent is left alone), each at its own time (`fieldTimes`, else the change's `updatedAt`):
///   per field the later `LWWKey` wins (`FieldMerge`). The fields the device sent must make a
///   valid record with the stored ones, and so must the merged record; otherwise the change is
///   rejected and nothing of it applied. The fields a new record was not sent hold their
///   defaults at `LWWKey.never`, which any write beats.
/// - Whether the record is deleted settles by the whole record's key, as before: a delete wins
///   over every write older than it (and a tie); an upsert later than the delete brings the
///   record back. An upsert whose every field lost still moves the record's key to its own.
///   The fields themselves merge alike whether the record is deleted or not (an upsert older
///   than the delete is superseded, yet its fields merge into the tombstone, which keeps them),
///   so any order of arrival ends in the same record.
/// - What a record needs of other records (a reminder's habit must be live) is asked of it only
///   when it is live after the change (`whenLive`): an edit that merges into a tombstone is not
///   refused for a reference the delete made moot, as it would not have been before the delete.
/// - The record's key is the latest key of any write applied to it.
public struct FieldMergedRecord: Sendable, Equatable {
    public var fields: FieldMerge
    public var key: LWWKey
    public var deleted: Bool

    public init(fields: FieldMerge, key: LWWKey, deleted: Bool) {
        self.fields = fields
        self.key = key
        self.deleted = deleted
    }

    /// One change of the batch to this record.
    public struct Change: Sendable {
        public let index: Int
        public let key: LWWKey
        /// The fields sent (nil for a delete).
        public let fields: [String: JSONValue]?
        /// The time of each field that has one of its own; the others changed at `key`.
        public let times: [String: LWWKey]

        public init(index: Int, key: LWWKey, fields: [String: JSONValue]?, times: [String: LWWKey] = [:]) {
            self.index = index
            self.key = key
            self.fields = fields
            self.times = times
        }
    }

    public enum Outcome: Sendable, Equatable {
        /// Something of it was written (some field, the delete, the revival).
        case applied
        /// Every field it carries is stored already with the same time: a replay.
        case unchanged
        /// Nothing of it won.
        case superseded
        case rejected(ChangeRejection)
    }

    public struct Settlement: Sendable {
        /// Nil when there was no record and every change was rejected.
        public var record: FieldMergedRecord?
        /// By change index.
        public var outcomes: [Int: Outcome] = [:]
        /// The incoming field writes that lost, each with its change and the write that beat
        /// it (as today's record rule logs the changes that lost, not the stored writes a newer
        /// one replaces). A loss to the same value is not listed.
        public var losses: [(index: Int, loss: FieldMerge.Loss)] = []
        /// Whether the record must be written.
        public var changed = false
        /// The superseded changes the conflict log keeps whole: deletes that lost to a later
        /// write, and upserts a delete beat. The other superseded ones lost field by field
        /// (`losses`), or only to the same values.
        public var loggedWhole: Set<Int> = []
    }

    /// Validates a whole record's fields by its collection's rules and returns them canonical
    /// (`CanonicalFields`), or throws why not.
    public typealias Validate = ([String: JSONValue]) throws(ChangeRejection) -> [String: JSONValue]

    /// Checks what a live record needs beyond its own fields (canonical, as `Validate` returns
    /// them), or throws why not.
    public typealias LiveCheck = ([String: JSONValue]) throws(ChangeRejection) -> Void

    /// Folds `changes` (in batch order) into `stored` (nil: the record does not exist).
    /// `earliest`: fields where the earlier value wins (`FieldMerge.apply`); `whenLive`: asked
    /// of the record only when it is live after the change.
    public static func settle(
        _ stored: FieldMergedRecord?, _ changes: [Change], earliest: Set<String> = [], validate: Validate,
        whenLive: LiveCheck = { _ throws(ChangeRejection) in }
    ) -> Settlement {
        var settlement = Settlement(record: stored)
        for change in changes {
            let outcome = settlement.apply(change, earliest: earliest, validate: validate, whenLive: whenLive)
            settlement.outcomes[change.index] = outcome
            if outcome == .applied { settlement.changed = true }
        }
        return settlement
    }
}

extension FieldMergedRecord.Settlement {
    fileprivate mutating func apply(
        _ change: FieldMergedRecord.Change, earliest: Set<String>, validate: FieldMergedRecord.Validate, whenLive: FieldMergedRecord.LiveCheck
    ) -> FieldMergedRecord.Outcome {
        guard let sent = change.fields else { return delete(change) }
        var current = record ?? FieldMergedRecord(fields: FieldMerge(), key: .never, deleted: false)
        let later = current.key < change.key
        // Older than the delete that stands (or at its key): the record stays deleted whatever
        // the change's fields do.
        let staysDeleted = current.deleted && !later
        // What the device meant must make a valid record with the stored fields it did not send.
        let canonical: [String: JSONValue]
        do {
            canonical = try validate(current.fields.record.merging(sent, uniquingKeysWith: { $1 }))
            if !staysDeleted { try whenLive(canonical) }
        } catch {
            return .rejected(error)
        }
        // A field the record holds no write of holds its default, which any write beats.
        var base = current.fields.fields
        for (field, value) in canonical where base[field] == nil { base[field] = FieldMerge.Entry(value: value, at: .never) }
        current.fields = FieldMerge(base)
        var incoming: [String: FieldMerge.Entry] = [:]
        for field in sent.keys {
            guard let value = canonical[field] else { continue }
            incoming[field] = FieldMerge.Entry(value: value, at: change.times[field] ?? change.key)
        }
        var merged = current.fields
        let fieldLosses = merged.apply(incoming, earliest: earliest)
        // A write that lost to the same value (the same bytes) lost nothing: it is not reported.
        let lost = fieldLosses.filter { incoming[$0.field] == $0.lost && !$0.lost.value.jsonText.utf8.elementsEqual($0.winner.value.jsonText.utf8) }
        let won = incoming.contains { merged.fields[$0.key] == $0.value && current.fields.fields[$0.key] != $0.value }
        if !won && !(current.deleted && later) {
            if current.deleted {
                loggedWhole.insert(change.index)
                return .superseded
            }
            losses += lost.map { (change.index, $0) }
            if later {
                // Its fields lost, but the record was live at its time: a delete older than
                // it must lose whichever arrives first.
                current.key = change.key
                record = current
                changed = true
            }
            return incoming.allSatisfy({ current.fields.fields[$0.key] == $0.value }) ? .unchanged : .superseded
        }
        do {
            _ = try validate(merged.record)
            if !staysDeleted { try whenLive(merged.record) }
        } catch {
            return .rejected(
                ChangeRejection(
                    error.code, field: error.field,
                    "with the fields other devices changed meanwhile, \(error.message); send the record again as it should be"))
        }
        current.fields = merged
        if staysDeleted {
            // Older than the delete: the record stays deleted and the change is superseded
            // (logged whole); its fields still merge into the tombstone, so that a later
            // upsert brings back the same record whichever of the two arrived first.
            record = current
            changed = true
            loggedWhole.insert(change.index)
            return .superseded
        }
        losses += lost.map { (change.index, $0) }
        current.deleted = false
        if later { current.key = change.key }
        record = current
        return .applied
    }

    /// A delete wins over every write older than it, and a tie (one device, one millisecond).
    private mutating func delete(_ change: FieldMergedRecord.Change) -> FieldMergedRecord.Outcome {
        guard var current = record else {
            record = FieldMergedRecord(fields: FieldMerge(), key: change.key, deleted: true)
            return .applied
        }
        if current.deleted && current.key == change.key { return .unchanged }
        guard current.key < change.key || (!current.deleted && current.key == change.key) else {
            // It carries no fields to log one by one: the log keeps the delete itself.
            loggedWhole.insert(change.index)
            return .superseded
        }
        current.deleted = true
        current.key = change.key
        record = current
        return .applied
    }
}
