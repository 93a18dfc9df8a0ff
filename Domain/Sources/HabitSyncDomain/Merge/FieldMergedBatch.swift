import Foundation

/// How one batch's changes to a collection that merges field by field (habits, reminders,
/// selected apps, user settings, achievements) settle against the stored records they name:
/// which record each change is to, each record's fold (`FieldMergedRecord.settle`), the
/// records to write with their versions, and each change's outcome. Pure: the store reads the
/// stored records (and, for reminders, which habits are live), calls this, and writes what it
/// says.
public struct FieldMergedBatch: Sendable {
    /// What names the record a change is to.
    public enum Target: Sendable {
        /// Its id.
        case id
        /// The user: one record per user (settings).
        case user
        /// Its `achievementId`: one achievement per id and user; the first id sent stays the
        /// record's.
        case achievementID
    }

    /// The record a change is to, as `Target` names it.
    public enum RecordKey: Hashable, Sendable {
        case id(UUID)
        /// The user's one record.
        case user
        /// By bytes: two `achievementId`s that differ only in Unicode normalisation are two
        /// records, as they are in PostgreSQL.
        case achievementID(ExactText)
    }

    /// A stored record as the merge needs it.
    public struct StoredRecord: Sendable {
        public let id: UUID
        public let serverVersion: Int64
        public let record: FieldMergedRecord

        public init(id: UUID, serverVersion: Int64, record: FieldMergedRecord) {
            self.id = id
            self.serverVersion = serverVersion
            self.record = record
        }
    }

    /// One record to write: every data column from `validated` (nil: a tombstone that holds no
    /// field, whose columns stay as they are), the record's key and its fields' keys.
    public struct Write: Sendable {
        public let target: RecordKey
        public let id: UUID
        public let version: Int64
        public let record: FieldMergedRecord
        public let validated: ValidatedRecord?
    }

    /// In the order of the batch's records (versions follow it, and so does the order pulls
    /// return them).
    public private(set) var writes: [Write] = []
    /// Each record's fold, by target.
    public private(set) var settlements: [RecordKey: FieldMergedRecord.Settlement] = [:]
    /// The id each record is kept under: the stored one; a new one takes `userRecordID` (for
    /// `.user`) or the id of the first change to it.
    public private(set) var recordIDs: [RecordKey: UUID] = [:]
    /// The version each written record took (`writes`, by key: a lookup per change).
    private var versions: [RecordKey: Int64] = [:]
    /// The version the batch's next write takes.
    public private(set) var nextVersion: Int64

    /// What names `change`'s record.
    public static func target(of change: PushChange, by target: Target) -> RecordKey {
        switch target {
        case .id: .id(change.id)
        case .user: .user
        case .achievementID:
            if case .achievement(let achievement)? = change.record {
                .achievementID(ExactText(achievement.achievementId))
            } else {
                // A delete names no achievementId: it is to the achievement whose id is its
                // id's text.
                .achievementID(ExactText(change.id.uuidString.lowercased()))
            }
        }
    }

    /// The distinct targets of `changes`, in batch order: what the store reads.
    public static func targets(of changes: [PushChange], by target: Target) -> [RecordKey] {
        var seen = Set<RecordKey>()
        return changes.map { Self.target(of: $0, by: target) }.filter { seen.insert($0).inserted }
    }

    /// - Parameters:
    ///   - stored: the stored records of the changes' targets, by target.
    ///   - liveHabits: for reminders, the habits named (sent or stored) that are live after this
    ///     batch's habits; a live reminder must name one.
    public init(
        _ collection: SyncCollection, changes: [PushChange], by target: Target, stored: [RecordKey: StoredRecord], device: String,
        userRecordID: UUID, liveHabits: Set<UUID> = [], context: ValidationContext, firstVersion: Int64
    ) {
        nextVersion = firstVersion
        for change in changes {
            let key = Self.target(of: change, by: target)
            if recordIDs[key] == nil { recordIDs[key] = stored[key]?.id ?? (target == .user ? userRecordID : change.id) }
        }
        // The records validated, by their canonical text: a write takes the settled record's
        // from here rather than validating it once more. A class so the validation closure can
        // fill it; it lives and dies inside this init.
        final class Validated {
            var byText: [ExactText: ValidatedRecord] = [:]
        }
        let validated = Validated()
        let validate: FieldMergedRecord.Validate = { fields throws(ChangeRejection) in
            let record = try ValidatedRecord.validate(collection, fields, context: context)
            let canonical = CanonicalFields.of(record) ?? [:]
            validated.byText[ExactText(JSONValue.object(canonical).jsonText)] = record
            return canonical
        }
        let whenLive: FieldMergedRecord.LiveCheck = { fields throws(ChangeRejection) in
            guard collection == .reminders, case .string(let text)? = fields["habitId"], let habit = UUID(uuidString: text) else { return }
            if !liveHabits.contains(habit) {
                throw ChangeRejection(.unknownReference, field: "habitId", "habitId \(text) names no habit of this user (or a deleted one)")
            }
        }
        // An achievement's first unlock stays its unlock, whoever wrote it last.
        let earliest = Set((RecordFields.of(collection) ?? []).filter { $0.merge == .earliestWins }.map(\.name))
        let byTarget = Dictionary(grouping: changes) { Self.target(of: $0, by: target) }
        for key in Self.targets(of: changes, by: target) {
            guard let group = byTarget[key], let id = recordIDs[key] else { continue }
            let settlement = FieldMergedRecord.settle(
                stored[key]?.record, group.map { Self.fieldChange($0, device: device) }, earliest: earliest, validate: validate, whenLive: whenLive)
            settlements[key] = settlement
            guard settlement.changed, let record = settlement.record else { continue }
            // A tombstone keeps the fields merged into it (a later upsert brings them back);
            // one that holds none keeps its columns as they are.
            var valid: ValidatedRecord?
            if !record.fields.fields.isEmpty {
                let fields = record.fields.record
                valid =
                    validated.byText[ExactText(JSONValue.object(fields).jsonText)]
                    ?? (try? ValidatedRecord.validate(collection, fields, context: context))
                // Not a record under today's rules, and live: not written (its changes are
                // refused as not stored).
                if valid == nil && !record.deleted { continue }
            }
            writes.append(Write(target: key, id: id, version: nextVersion, record: record, validated: valid))
            versions[key] = nextVersion
            nextVersion += 1
        }
    }

    /// The version `target`'s record was written with; nil: not written.
    public func version(of target: RecordKey) -> Int64? { versions[target] }

    /// A change as the merge takes it: its fields (all of a whole record), each at its time.
    static func fieldChange(_ change: PushChange, device: String) -> FieldMergedRecord.Change {
        let key = LWWKey(updatedAt: change.updatedAt, deviceID: device)
        guard change.op == .upsert else { return FieldMergedRecord.Change(index: change.index, key: key, fields: nil) }
        return FieldMergedRecord.Change(
            index: change.index, key: key, fields: change.rawRecord ?? [:],
            times: change.fieldTimes.mapValues { LWWKey(updatedAt: $0, deviceID: device) })
    }
}
