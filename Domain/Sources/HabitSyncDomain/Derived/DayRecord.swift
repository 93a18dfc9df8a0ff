import Foundation

/// What the rules need of one dailyProgress record.
public struct DayRecord: Sendable, Equatable {
    public let habitID: UUID
    public let date: LocalDate
    public let progressCount: Int
    /// The goal in force that day (the record's own snapshot).
    public let goalCount: Int
    public let skipped: Bool
    public let deleted: Bool

    public init(habitID: UUID, date: LocalDate, progressCount: Int, goalCount: Int, skipped: Bool = false, deleted: Bool = false) {
        self.habitID = habitID
        self.date = date
        self.progressCount = progressCount
        self.goalCount = goalCount
        self.skipped = skipped
        self.deleted = deleted
    }

    /// Complete: not deleted, not skipped, and the goal met — at least the goal for a
    /// formation habit, at most the ceiling for a breaking one (seed erratum 2).
    public func isComplete(habitType: String) -> Bool {
        guard !deleted, !skipped else { return false }
        return habitType == "breaking" ? progressCount <= goalCount : progressCount >= goalCount
    }
}
