/// Keeps the ledger's net daily award for each date equal to the tenant's setting when the
/// day is complete and to 0 when it is not, by appending corrections: two devices completing
/// the same day award it once, an undo takes it back, in whatever order pushes arrive.
public enum DailyCompletionXP {
    public static let awardReason = "daily_completion"
    public static let reversalReason = "daily_completion_reversed"

    public struct Correction: Sendable, Equatable {
        public let date: LocalDate
        public let amount: Int

        public init(date: LocalDate, amount: Int) {
            self.date = date
            self.amount = amount
        }

        public var reason: String { amount > 0 ? DailyCompletionXP.awardReason : DailyCompletionXP.reversalReason }
    }

    /// - Parameters:
    ///   - completeDays: the days that are complete now.
    ///   - netAwards: the ledger's current net of daily awards per date.
    ///   - setting: XP per complete day (0: awards off, and existing ones are reversed).
    public static func corrections(completeDays: Set<LocalDate>, netAwards: [LocalDate: Int], setting: Int) -> [Correction] {
        var corrections: [Correction] = []
        for date in completeDays.union(netAwards.keys).sorted() {
            let target = completeDays.contains(date) ? setting : 0
            let delta = target - (netAwards[date] ?? 0)
            if delta != 0 { corrections.append(Correction(date: date, amount: delta)) }
        }
        return corrections
    }
}
