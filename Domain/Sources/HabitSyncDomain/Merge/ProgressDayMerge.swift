import Foundation

/// How one batch's changes to one day's progress settle against what is stored: the store's
/// side of `ProgressCounter` (issue 26). Pure; the store reads the stored day, folds the
/// batch's changes into it in batch order, and writes what this says.
///
/// The day has two parts with a key each:
/// - its **count**: the latest *set* (an upsert without `increment`, or a delete, which sets
///   0) by its `LWWKey`, plus every *addition* (`increment`) made after that set. Additions
///   are kept by the store and summed there; this decides the set and lists the additions.
/// - its **other fields** (habitId, date, goalCount, difficulty, skipReason, skipNote) and
///   whether it is deleted: last writer wins by the record's key, as for every record.
/// - its **timestamps** follow the count: the latest set's (those at or before its time; a
///   delete has none) and every addition's that are later than the latest set's time, the
///   latest `maximumTimestamps` of them. Like the count, they do not depend on the order in
///   which the changes arrive.
///
/// So an addition is never lost to a concurrent write of another field, and a set that a
/// device made after it saw some additions absorbs exactly those (by time) and no others.
public struct ProgressDayMerge: Sendable {
    /// The stored day.
    public struct Stored: Sendable {
        /// Nil when the stored record could not be read under today's rules: then any incoming
        /// fields count as different.
        public var record: DailyProgressRecord?
        public var timestamps: [Date]
        public var key: LWWKey
        public var deleted: Bool
        /// Nil: no set yet (a day created by additions counts from 0).
        public var countSetting: ProgressCounter.Setting?

        public init(record: DailyProgressRecord?, timestamps: [Date], key: LWWKey, deleted: Bool, countSetting: ProgressCounter.Setting?) {
            self.record = record
            self.timestamps = timestamps
            self.key = key
            self.deleted = deleted
            self.countSetting = countSetting
        }
    }

    /// One change of the batch to this day.
    public struct Change: Sendable {
        public let index: Int
        public let key: LWWKey
        /// Nil for a delete.
        public let record: DailyProgressRecord?
        public let increment: Int?

        public init(index: Int, key: LWWKey, record: DailyProgressRecord?, increment: Int?) {
            self.index = index
            self.key = key
            self.record = record
            self.increment = increment
        }
    }

    public enum Outcome: Sendable, Equatable {
        /// Everything it carried is stored (an addition is always counted, unless a later set
        /// or delete already covers it).
        case applied
        /// The same write as stored: nothing to do.
        case unchanged
        /// A part of it lost to a different, later value: the device should take the winner.
        case superseded
    }

    /// The most timestamps a day keeps (the schema's limit): the latest ones.
    public static let maximumTimestamps = 1000

    /// The day as it stands after the changes folded so far (nil: nothing stored or written).
    public private(set) var key: LWWKey?
    public private(set) var deleted = false
    public private(set) var countSetting: ProgressCounter.Setting?
    /// The change whose record fields the day now has; nil: the stored ones.
    public private(set) var fieldsFrom: Change?
    /// The day's timestamps, when a change moved them; nil: the stored ones.
    public private(set) var timestamps: [Date]?
    /// The additions to keep, by change index.
    public private(set) var additions: [(index: Int, addition: ProgressCounter.Addition)] = []
    public private(set) var outcomes: [Int: Outcome] = [:]
    /// Whether anything must be written.
    public private(set) var changed = false

    private let stored: Stored?

    public init(stored: Stored?) {
        self.stored = stored
        key = stored?.key
        deleted = stored?.deleted ?? false
        countSetting = stored?.countSetting
    }

    /// The record fields the day has now (nil: a tombstone, or fields that could not be read).
    private var currentRecord: DailyProgressRecord? { fieldsFrom?.record ?? stored?.record }
    private var currentTimestamps: [Date] { timestamps ?? stored?.timestamps ?? [] }

    public mutating func apply(_ change: Change) {
        let fieldsWin = key.map { $0 < change.key } ?? true
        guard let record = change.record else { return applyDelete(change, fieldsWin: fieldsWin) }
        if let increment = change.increment {
            additions.append((change.index, ProgressCounter.Addition(delta: increment, at: change.key)))
            changed = true
            addTimestamps(record.timestamps)
            if fieldsWin {
                take(change)
            } else if deleted {
                // A later tombstone stands; the addition is kept, covered by the delete's 0.
                outcomes[change.index] = .superseded
                return
            }
            outcomes[change.index] = fieldsWin || Self.sameFields(record, currentRecord) ? .applied : .superseded
            return
        }
        // A set: the count (and the timestamps) against the latest set, the fields against the
        // record's key.
        let setting = ProgressCounter.Setting(value: record.progressCount, at: change.key)
        let countWins = countSetting.map(setting.replaces) ?? true
        let same = !fieldsWin && key == change.key && !deleted && countSetting == setting && Self.sameFields(record, currentRecord)
        if same {
            outcomes[change.index] = .unchanged
            return
        }
        if countWins {
            countSetting = setting
            replaceTimestamps(at: setting, with: record.timestamps)
            changed = true
        }
        if fieldsWin { take(change) }
        let lostFields = !fieldsWin && (deleted || !Self.sameFields(record, currentRecord))
        let lostCount = !countWins && countSetting?.value != setting.value
        outcomes[change.index] = lostFields || lostCount ? .superseded : .applied
    }

    /// An addition's timestamps join the day's when they are later than the latest set's time.
    private mutating func addTimestamps(_ added: [Date]) {
        let after = countSetting.map { WireTime.milliseconds($0.at.updatedAt) } ?? .min
        let later = added.filter { WireTime.milliseconds($0) > after }
        guard !later.isEmpty else { return }
        let union = Self.union(currentTimestamps, later)
        if !Self.sameTimes(union, currentTimestamps) {
            timestamps = union
            changed = true
        }
    }

    /// A new latest set: its own timestamps (those at or before its time) and the day's that are
    /// later than its time, which additions after it brought.
    private mutating func replaceTimestamps(at setting: ProgressCounter.Setting, with own: [Date]) {
        let time = WireTime.milliseconds(setting.at.updatedAt)
        timestamps = Self.union(own.filter { WireTime.milliseconds($0) <= time }, currentTimestamps.filter { WireTime.milliseconds($0) > time })
    }

    private mutating func applyDelete(_ change: Change, fieldsWin: Bool) {
        if key == change.key && deleted {
            outcomes[change.index] = .unchanged
            return
        }
        // A delete sets the count to 0 at its time, whether or not the tombstone stands (a
        // later write may have brought the day back): additions made before it go with it.
        let zero = ProgressCounter.Setting(value: 0, at: change.key)
        if countSetting.map(zero.replaces) ?? true {
            countSetting = zero
            replaceTimestamps(at: zero, with: [])
            changed = true
        }
        guard fieldsWin else {
            outcomes[change.index] = .superseded
            return
        }
        key = change.key
        deleted = true
        fieldsFrom = nil
        changed = true
        outcomes[change.index] = .applied
    }

    private mutating func take(_ change: Change) {
        key = change.key
        deleted = false
        fieldsFrom = change
        changed = true
    }

    /// The fields other than the count and the timestamps, strings compared as bytes (as
    /// PostgreSQL stores them).
    static func sameFields(_ a: DailyProgressRecord, _ b: DailyProgressRecord?) -> Bool {
        guard let b else { return false }
        func bytes(_ text: String?) -> [UInt8]? { text.map { Array($0.utf8) } }
        return a.habitId == b.habitId && a.date == b.date && a.goalCount == b.goalCount && a.difficulty == b.difficulty
            && bytes(a.skipReason) == bytes(b.skipReason) && bytes(a.skipNote) == bytes(b.skipNote)
    }

    static func sameTimes(_ a: [Date], _ b: [Date]) -> Bool { a.map(WireTime.milliseconds) == b.map(WireTime.milliseconds) }

    /// Both lists' times (to the millisecond, as stored), once each, in order; the latest
    /// `maximumTimestamps` of them.
    static func union(_ a: [Date], _ b: [Date]) -> [Date] {
        let milliseconds = Set((a + b).map(WireTime.milliseconds)).sorted().suffix(maximumTimestamps)
        return milliseconds.map { Date(timeIntervalSince1970: Double($0) / 1000) }
    }
}
