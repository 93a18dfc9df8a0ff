import Foundation

/// What the derived records (streaks, daily-completion XP, levels) can read of one day's
/// record: whether it counts at all, which habit and day it is, whether it is skipped, and
/// whether it meets its goal in either direction a habit reads it (at least the goal for a
/// formation habit, at most for a breaking one, `DayRecord.isComplete`). A write that leaves
/// the footprint as it was cannot move any derived record, so the push skips the recompute:
/// the second completion of an already complete day, what phones send most (issue 46).
public enum DayFootprint: Sendable, Equatable {
    /// No record, or a deleted one: the classifier reads neither.
    case absent
    /// A skip is neutral whatever the count (`DayClassifier`).
    case skipped(habitID: UUID, date: LocalDate)
    case counted(habitID: UUID, date: LocalDate, reachesGoal: Bool, withinGoal: Bool)

    public init(_ record: DayRecord?) {
        guard let record, !record.deleted else {
            self = .absent
            return
        }
        if record.skipped {
            self = .skipped(habitID: record.habitID, date: record.date)
        } else {
            self = .counted(
                habitID: record.habitID, date: record.date, reachesGoal: record.progressCount >= record.goalCount,
                withinGoal: record.progressCount <= record.goalCount)
        }
    }

    /// Whether replacing `old` by `new` (nil: no record) can change a derived record.
    public static func canMoveDerivedState(from old: DayRecord?, to new: DayRecord?) -> Bool {
        DayFootprint(old) != DayFootprint(new)
    }
}
