import Foundation
import GRDB
import HabitSyncDomain

/// The typed face of the store: models in, `Stored` models out, on the same rows, rules and
/// outbox as the field-level API.
extension LocalStore {
    /// Validates and saves `value` as a pending edit (a new record unless `id` names one).
    @discardableResult
    public func save<Model: WritableModel>(_ value: Model, id: UUID = UUID()) throws -> Stored<Model> {
        let record = try save(Model.collection, id: id, fields: try ModelCoding.fields(value))
        return try Stored(record) ?? { throw LocalStoreError.corruptRow }()
    }

    public func delete<Model: DeletableModel>(_ type: Model.Type, id: UUID) throws {
        try delete(Model.collection, id: id)
    }

    /// The live record `id` of the model's collection; nil when absent or deleted.
    public func fetch<Model: SyncModel>(_ type: Model.Type, id: UUID) throws -> Stored<Model>? {
        try record(Model.collection, id: id).flatMap { try Stored($0) }
    }

    /// Every live record of the model's collection, by id.
    public func fetchAll<Model: SyncModel>(_ type: Model.Type) throws -> [Stored<Model>] {
        try records(Model.collection).compactMap { try Stored($0) }
    }

    /// Every live record of the model's collection now and after each change, for a view.
    public func observeAll<Model: SyncModel>(_ type: Model.Type) -> AsyncThrowingStream<[Stored<Model>], any Error> {
        observation { try Self.fetchAll($0, Model.collection, includingDeleted: false).compactMap { try Stored<Model>($0) } }
    }

    /// A record the server computes (`GlobalStreak`, `UserProgress`, `UsageStreak`), as last
    /// pulled; nil before the first pull that brought it.
    public func derived<Model: DerivedModel>(_ type: Model.Type) throws -> Model? {
        try fetchAll(type).first?.value
    }

    /// The user's settings: the one settings record, whichever id it has.
    public func settings() throws -> Stored<UserSettings>? {
        try fetchAll(UserSettings.self).first
    }

    /// Saves the user's settings under the id they already have (the server keeps one record
    /// per user and tells the device its id on the first push).
    @discardableResult
    public func saveSettings(_ value: UserSettings) throws -> Stored<UserSettings> {
        try save(value, id: try settings()?.id ?? UUID())
    }

    /// A habit's progress of one day. Until a push merges them, a day recorded on this device
    /// and pulled from another can be two records; the one last-writer-wins would keep is it.
    public func progress(habitId: UUID, date: LocalDate) throws -> Stored<DailyProgress>? {
        let rows = try database.read { db in
            try Row.fetchAll(db, sql: LocalSchema.progressOfDay, arguments: [Self.key(habitId), date.description]).map(LocalRecord.init(row:))
        }
        return try rows.compactMap { try Stored<DailyProgress>($0) }
            .max { ($0.record.updatedAt, $0.record.updatedBy) < ($1.record.updatedAt, $1.record.updatedBy) }
    }

    /// Adds `amount` (negative: takes away) to a habit's progress of `date` (a new record for
    /// the day if it has none). Sent as an increment: the server adds it to what the user's
    /// other devices added meanwhile, so a completion on the phone and one on the watch, both
    /// offline, make two. The count never goes below 0 here.
    @discardableResult
    public func addProgress(habitId: UUID, date: LocalDate, amount: Int = 1, goalCount: Int) throws -> Stored<DailyProgress> {
        if let current = try progress(habitId: habitId, date: date) {
            var value = current.value
            value.progressCount = max(0, value.progressCount + amount)
            return try save(value, id: current.id)
        }
        return try save(DailyProgress(habitId: habitId, date: date, progressCount: max(0, amount), goalCount: goalCount))
    }

    /// Sets a habit's progress of `date` to `count`, as an absolute value ("I did 5 today, not
    /// 3"): on the server the latest set wins, and additions made after it (by their device's
    /// time) still add on top; additions made before it are taken to be in it.
    @discardableResult
    public func setProgress(habitId: UUID, date: LocalDate, count: Int, goalCount: Int) throws -> Stored<DailyProgress> {
        let current = try progress(habitId: habitId, date: date)
        var progress = current?.value ?? DailyProgress(habitId: habitId, date: date, progressCount: count, goalCount: goalCount)
        progress.progressCount = count
        let record = try save(.dailyProgress, id: current?.id ?? UUID(), fields: try ModelCoding.fields(progress), settingCount: true)
        return try Stored(record) ?? { throw LocalStoreError.corruptRow }()
    }
}
