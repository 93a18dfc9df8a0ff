import Foundation
import HabitSyncDomain

extension ProgressDaySettlement.StoredDay {
    /// The day as the store holds it once `write` of `settlement` is stored over `previous`:
    /// the row as `writeProgressDays` leaves it, and its additions as `writeAdditions` leaves
    /// them (those the new set covers forgotten, the batch's kept ones added).
    static func after(
        _ write: ProgressDaySettlement.DayWrite, of settlement: ProgressDaySettlement, previous: Self?, device: String, batch: UUID
    ) -> Self {
        var additions = previous?.additions ?? []
        for covered in settlement.covered where covered.day == write.id {
            additions.removeAll { !(covered.through < $0.addition.at) }
        }
        for new in settlement.added where new.day == write.id {
            additions.append((ProgressDaySettlement.additionID(device: device, batch: batch, index: new.changeIndex), new.addition))
        }
        var record: DailyProgressRecord?
        if !write.deleted, let habit = write.fields.habitID, let date = write.fields.date, let goal = write.fields.goalCount {
            record = DailyProgressRecord(
                habitId: habit, date: date, progressCount: write.count, goalCount: goal, timestamps: write.timestamps,
                difficulty: write.fields.difficulty, skipReason: write.fields.skipReason, skipNote: write.fields.skipNote)
        }
        return Self(
            id: write.id, serverVersion: write.version, fields: write.fields,
            merge: .init(record: record, timestamps: write.timestamps, key: write.key, deleted: write.deleted, countSetting: write.setting),
            additions: additions)
    }
}
