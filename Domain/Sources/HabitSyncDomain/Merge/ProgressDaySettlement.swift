import Foundation

/// How one batch's daily-progress changes settle against the stored days they name: the
/// rows to write, the additions to keep and to forget, each change's outcome and version,
/// and whether the derived records can have moved. Pure: the store reads the stored days
/// (by the changes' ids, and by their habit and date), calls this, and writes what it says.
///
/// A day is one record per (habitId, date), whatever id each device gave it: a change's
/// canonical id is the stored day's for its habit and date, else the first id this batch used
/// for them, else its own. Each day folds its changes in batch order (`ProgressDayMerge`) and
/// its count is the latest set plus the additions after it (`ProgressCounter`), the stored
/// additions included.
public struct ProgressDaySettlement: Sendable {
    /// One stored day, as the store read it.
    public struct StoredDay: Sendable {
        public let id: UUID
        public let serverVersion: Int64
        /// The record fields as stored (a tombstone keeps those it had), written back where
        /// the fold keeps them.
        public let fields: ProgressDayFields
        public let merge: ProgressDayMerge.Stored
        /// The additions after the day's latest set, by their ids (`additionID`).
        public let additions: [(id: String, addition: ProgressCounter.Addition)]

        public init(
            id: UUID, serverVersion: Int64, fields: ProgressDayFields, merge: ProgressDayMerge.Stored,
            additions: [(id: String, addition: ProgressCounter.Addition)]
        ) {
            self.id = id
            self.serverVersion = serverVersion
            self.fields = fields
            self.merge = merge
            self.additions = additions
        }

        /// The day as the derived records read it now.
        var dayRecord: DayRecord? { fields.dayRecord(count: merge.record?.progressCount, deleted: merge.deleted) }
    }

    /// One row to write, every column as the fold decided (the stored values where it kept them).
    public struct DayWrite: Sendable, Equatable {
        public let id: UUID
        public let version: Int64
        /// The record's key: the winner of its fields (or its delete).
        public let key: LWWKey
        public let deleted: Bool
        public let fields: ProgressDayFields
        public let timestamps: [Date]
        /// At most `Int32.max` (the column's type).
        public let count: Int
        /// The latest set; nil: none yet (a day created by additions).
        public let setting: ProgressCounter.Setting?
        /// Whether the day is stored already (an update, not an insert).
        public let isStored: Bool
    }

    /// A stored addition the day's new latest set covers: forget those at or before `through`.
    public struct CoveredAdditions: Sendable, Equatable {
        public let day: UUID
        public let through: LWWKey

        public init(day: UUID, through: LWWKey) {
            self.day = day
            self.through = through
        }
    }

    /// An addition of this batch to keep (made after the day's latest set).
    public struct NewAddition: Sendable, Equatable {
        public let day: UUID
        public let changeIndex: Int
        public let addition: ProgressCounter.Addition
    }

    /// What one change came to.
    public struct ChangeOutcome: Sendable, Equatable {
        public let index: Int
        /// The day's canonical id.
        public let day: UUID
        public let outcome: ProgressDayMerge.Outcome
        /// The day's version after the batch (the new one when it was written); nil: a day
        /// neither stored nor written.
        public let version: Int64?

        public init(index: Int, day: UUID, outcome: ProgressDayMerge.Outcome, version: Int64?) {
            self.index = index
            self.day = day
            self.outcome = outcome
            self.version = version
        }
    }

    public private(set) var writes: [DayWrite] = []
    public private(set) var covered: [CoveredAdditions] = []
    public private(set) var added: [NewAddition] = []
    /// In the order of the batch's days, each day's changes in batch order.
    public private(set) var outcomes: [ChangeOutcome] = []
    /// Whether a written day can move the streaks, XP or levels (`DayFootprint`).
    public private(set) var movesDerivedState = false
    /// What the writes do to the user's digest of the collection (`RecordDigest`): each written
    /// day's stored term out where it was live, its new one in where it is.
    public private(set) var digestChange = RecordDigest()
    /// The first days of the months whose streak summaries the writes can change: the months
    /// of a day's old and new date where it was and is live, when what the day classifier
    /// reads of it moved (`DayFootprint`). What the summaries hold is a function of that alone.
    public private(set) var streakMonths: Set<LocalDate> = []
    /// The version the batch's next write takes.
    public private(set) var nextVersion: Int64

    /// The id under which an addition is kept for good: the device, its batch and the change's
    /// index (a retry of the batch is the same addition).
    public static func additionID(device: String, batch: UUID, index: Int) -> String {
        "\(device)|\(batch.uuidString.lowercased())|\(index)"
    }

    /// - Parameters:
    ///   - changes: the batch's daily-progress changes, in batch order, by `device`.
    ///   - stored: the stored days the changes name, by id or by habit and date.
    public init(changes: [PushChange], stored: [StoredDay], device: String, batch: UUID, firstVersion: Int64) {
        nextVersion = firstVersion
        var byID: [UUID: StoredDay] = [:]
        var byNaturalKey: [NaturalKey: UUID] = [:]
        for day in stored {
            byID[day.id] = day
            if let key = NaturalKey(day.fields) { byNaturalKey[key] = day.id }
        }
        var days: [UUID] = []
        var changesOf: [UUID: [ProgressDayMerge.Change]] = [:]
        for change in changes {
            var day = change.id
            var record: DailyProgressRecord?
            if case .dailyProgress(let sent)? = change.record {
                record = sent
                let key = NaturalKey(habit: sent.habitId, date: sent.date)
                if let existing = byNaturalKey[key] { day = existing } else { byNaturalKey[key] = change.id }
            }
            if changesOf[day] == nil { days.append(day) }
            changesOf[day, default: []].append(
                ProgressDayMerge.Change(
                    index: change.index, key: LWWKey(updatedAt: change.updatedAt, deviceID: device), record: record, increment: change.increment))
        }
        for day in days { settle(day, changesOf[day] ?? [], stored: byID[day], device: device, batch: batch) }
    }

    private mutating func settle(_ id: UUID, _ changes: [ProgressDayMerge.Change], stored day: StoredDay?, device: String, batch: UUID) {
        var merge = ProgressDayMerge(stored: day?.merge)
        for change in changes { merge.apply(change) }
        var version = day?.serverVersion
        if merge.changed, let key = merge.key {
            version = nextVersion
            nextVersion += 1
            var counter = ProgressCounter()
            if let setting = merge.countSetting { counter.apply(.set(setting)) }
            for (id, addition) in day?.additions ?? [] { counter.apply(.add(id: id, addition)) }
            for (index, addition) in merge.additions {
                counter.apply(.add(id: Self.additionID(device: device, batch: batch, index: index), addition))
            }
            let fields = merge.fieldsFrom?.record.map(ProgressDayFields.init(record:)) ?? day?.fields ?? ProgressDayFields()
            // The timestamps follow the count, not the fields' writer (`ProgressDayMerge`).
            let timestamps = merge.timestamps ?? day?.merge.timestamps ?? []
            let count = min(counter.count, Int(Int32.max))
            writes.append(
                DayWrite(
                    id: id, version: nextVersion - 1, key: key, deleted: merge.deleted, fields: fields, timestamps: timestamps,
                    count: count, setting: merge.countSetting, isStored: day != nil))
            let before = day?.dayRecord, after = fields.dayRecord(count: count, deleted: merge.deleted)
            if DayFootprint.canMoveDerivedState(from: before, to: after) {
                movesDerivedState = true
                for record in [before, after].compactMap({ $0 }) { streakMonths.insert(record.date.firstOfMonth) }
            }
            if let day, !day.merge.deleted { digestChange.remove(id: id, serverVersion: day.serverVersion) }
            if !merge.deleted { digestChange.add(id: id, serverVersion: nextVersion - 1) }
            if let setting = merge.countSetting, (day?.additions ?? []).contains(where: { !(setting.at < $0.addition.at) }) {
                covered.append(CoveredAdditions(day: id, through: setting.at))
            }
            for (index, addition) in merge.additions where merge.countSetting.map({ $0.at < addition.at }) ?? true {
                added.append(NewAddition(day: id, changeIndex: index, addition: addition))
            }
        }
        for change in changes {
            outcomes.append(ChangeOutcome(index: change.index, day: id, outcome: merge.outcomes[change.index] ?? .superseded, version: version))
        }
    }

    /// A day's habit and date, which name it whatever its id.
    private struct NaturalKey: Hashable {
        let habit: UUID
        let date: LocalDate

        init(habit: UUID, date: LocalDate) {
            self.habit = habit
            self.date = date
        }

        init?(_ fields: ProgressDayFields) {
            guard let habit = fields.habitID, let date = fields.date else { return nil }
            self.init(habit: habit, date: date)
        }
    }
}

/// A day's record fields other than its count and timestamps, as `daily_progress` holds them
/// (each may be missing from a tombstone of a day this server never held).
public struct ProgressDayFields: Sendable, Equatable {
    public var habitID: UUID?
    public var date: LocalDate?
    public var goalCount: Int?
    public var difficulty: Int?
    public var skipReason: String?
    public var skipNote: String?

    public init(
        habitID: UUID? = nil, date: LocalDate? = nil, goalCount: Int? = nil, difficulty: Int? = nil, skipReason: String? = nil,
        skipNote: String? = nil
    ) {
        self.habitID = habitID
        self.date = date
        self.goalCount = goalCount
        self.difficulty = difficulty
        self.skipReason = skipReason
        self.skipNote = skipNote
    }

    public init(record: DailyProgressRecord) {
        self.init(
            habitID: record.habitId, date: record.date, goalCount: record.goalCount, difficulty: record.difficulty,
            skipReason: record.skipReason, skipNote: record.skipNote)
    }

    /// The day as the derived records read it, with this count; nil where they read nothing
    /// (a tombstone, or a row without the fields a live day has).
    public func dayRecord(count: Int?, deleted: Bool) -> DayRecord? {
        guard !deleted, let habitID, let date, let count, let goalCount else { return nil }
        return DayRecord(habitID: habitID, date: date, progressCount: count, goalCount: goalCount, skipped: skipReason != nil)
    }
}
