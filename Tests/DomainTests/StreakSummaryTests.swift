import Foundation
import HabitSyncDomain
import SeededRandom
import Testing

/// Month summaries folded together give the streak a walk over every day gives.
@Suite struct StreakSummaryTests {
    @Test func foldingSummariesOfAnySplitEqualsTheWalk() {
        var generator = SeededGenerator(seed: 20261123)
        let classes: [DayClassification] = [.complete, .complete, .complete, .incomplete, .rest]
        for _ in 0..<2_000 {
            let today = LocalDate("2026-11-23")!
            let count = Int.random(in: 1...90, using: &generator)
            let days = (0..<count).map { offset in
                (dayNumber: today.dayNumber - count + 1 + offset, classification: classes.randomElement(using: &generator)!)
            }
            let walked = GlobalStreak.compute(days, today: today)
            // Cut the past days at random points, summarise each piece, fold, then add today.
            var folded = StreakSummary.empty
            var rest = days.dropLast()[...]
            while !rest.isEmpty {
                let piece = rest.prefix(Int.random(in: 1...31, using: &generator))
                folded = folded.followed(by: StreakSummary(days: Array(piece)))
                rest = rest.dropFirst(piece.count)
            }
            folded = folded.followed(by: .today(today.dayNumber, days.last!.classification))
            #expect(folded.streak(today: today) == walked, "\(days.map(\.classification))")
        }
    }

    @Test func theWindowReadsTodaysMonthRawAndStoresWholePastMonths() {
        let today = LocalDate("2026-11-23")!
        let recent = StreakWindow(today: today, earliestStart: LocalDate("2026-11-05"))
        #expect(recent.closedMonths.isEmpty && recent.leadingDays == nil)
        #expect(recent.currentDays == LocalDate("2026-11-05")!.dayNumber...today.dayNumber)

        let year = StreakWindow(today: today, earliestStart: LocalDate("2025-10-17"))
        #expect(year.closedMonths.first == LocalDate("2025-10-01") && year.closedMonths.last == LocalDate("2026-10-01"))
        #expect(year.closedMonths.count == 13 && year.leadingDays == nil)
        #expect(year.currentDays == LocalDate("2026-11-01")!.dayNumber...today.dayNumber)

        // Older than ten years: the window starts mid-month, and that month is read raw.
        let ancient = StreakWindow(today: today, earliestStart: LocalDate("2001-01-01"))
        let start = today.adding(days: -DayClassifier.historyDays)
        #expect(ancient.windowStart == start)
        #expect(ancient.leadingDays == start.dayNumber...(start.firstOfNextMonth.dayNumber - 1))
        #expect(ancient.closedMonths.first == start.firstOfNextMonth)
        // Every day of the window is covered once.
        let covered = (ancient.leadingDays.map { Array($0) } ?? []) + ancient.closedMonths.flatMap { Array(StreakWindow.days(of: $0)) } + Array(ancient.currentDays!)
        #expect(covered == Array(start.dayNumber...today.dayNumber))

        #expect(StreakWindow(today: today, earliestStart: nil).currentDays == nil)
        #expect(StreakWindow(today: today, earliestStart: LocalDate("2026-12-01")).currentDays == nil)
    }

    @Test func monthsHaveTheirLengths() {
        #expect(LocalDate("2024-02-17")!.firstOfMonth == LocalDate("2024-02-01"))
        #expect(LocalDate("2024-02-17")!.firstOfNextMonth == LocalDate("2024-03-01"))
        #expect(LocalDate("2023-02-28")!.firstOfNextMonth == LocalDate("2023-03-01"))
        #expect(LocalDate("2026-12-31")!.firstOfNextMonth == LocalDate("2027-01-01"))
        #expect(StreakWindow.days(of: LocalDate("2024-02-01")!).count == 29)
    }

    @Test func theUsageStreakFromRunsEqualsTheOneFromDays() {
        var generator = SeededGenerator(seed: 99)
        let today = LocalDate("2026-11-23")!
        for _ in 0..<3_000 {
            let days = Set((0..<Int.random(in: 0...30, using: &generator)).map { _ in today.adding(days: -Int.random(in: -2...25, using: &generator)) })
            // The runs the table would hold: maximal stretches of consecutive days.
            let sorted = days.map(\.dayNumber).sorted()
            var runs: [ClosedRange<Int>] = []
            for day in sorted {
                if let last = runs.last, last.upperBound == day - 1 { runs[runs.count - 1] = last.lowerBound...day } else { runs.append(day...day) }
            }
            let latestRun = runs.last { $0.lowerBound <= today.dayNumber }
            let fromRuns = UsageStreak.compute(latestRun: latestRun, latestExit: sorted.last.map(LocalDate.init(dayNumber:)), today: today)
            let fromDays = UsageStreak.compute(exitDays: days, today: today, latestExit: sorted.last.map(LocalDate.init(dayNumber:)))
            #expect(fromRuns == fromDays, "\(sorted.map { $0 - today.dayNumber })")
        }
    }
}
