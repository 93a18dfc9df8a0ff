import Foundation
import HabitSyncDomain
import LibPQClient

extension DerivedStateWriter {
    /// What an incremental recompute usually reads after its first round trip, read in it
    /// instead (issue 46: two round trips fewer per push that moves the derived records). The
    /// reads cannot wait for the user's time zone, award or habits, so they cover every zone's
    /// today (the server's UTC day ± 1) and are narrowed in Swift exactly as the queries they
    /// stand for narrow in SQL. When they do not cover what the recompute needs (a month whose
    /// summary is missing, a user whose exit runs are rebuilt, a window with no stored month),
    /// the recompute reads as before.
    struct Prefetch {
        /// Today in the zone furthest behind UTC, and furthest ahead.
        let earliestToday: LocalDate
        let latestToday: LocalDate
        /// Month summaries are read from here: ten years before the earliest today.
        let monthsFrom: LocalDate
        /// Days (progress, awards) are read from the first of the earliest today's month.
        let daysFrom: LocalDate

        init(now: Date) {
            let utc = LocalDate(now, in: TimeZone.gmt)
            earliestToday = utc.adding(days: -1)
            latestToday = utc.adding(days: 1)
            monthsFrom = earliestToday.adding(days: -DayClassifier.historyDays).firstOfMonth
            daysFrom = earliestToday.firstOfMonth
        }

        /// Four reads, in this order: month summaries, the latest exit runs, net awards, progress.
        func queries(tenant: UUID, user: String) -> [PGQuery] {
            [
                DerivedStateQueries.storedMonthsFrom(tenant: tenant, user: user, first: monthsFrom),
                DerivedStateQueries.latestExitRuns(tenant: tenant, user: user),
                DerivedStateQueries.netAwards(tenant: tenant, user: user, in: [(daysFrom, nil)]),
                DerivedStateQueries.progressOfLiveHabits(tenant: tenant, user: user, first: daysFrom, last: latestToday),
            ]
        }

        /// Whether the month summaries read cover the window's months.
        func covers(_ window: StreakWindow) -> Bool {
            window.today >= earliestToday && window.today <= latestToday && (window.closedMonths.first.map { $0 >= monthsFrom } ?? true)
        }

        /// Whether the days read cover these ranges (award ranges may be open-ended).
        func covers(awardRanges: [(first: LocalDate, last: LocalDate?)], rawRanges: [ClosedRange<Int>]) -> Bool {
            awardRanges.allSatisfy { $0.first >= daysFrom } && rawRanges.allSatisfy { $0.lowerBound >= daysFrom.dayNumber && $0.upperBound <= latestToday.dayNumber }
        }

        /// The window's stored month summaries (written under `award`) and the usage streak, as
        /// `storedMonthsAndUsage` reads them; nil when the runs read do not settle which is the
        /// latest run that starts by today.
        func monthsAndUsage(months: PGResult, runs: PGResult, window: StreakWindow, award: Int, today: LocalDate) throws -> ([LocalDate: StreakSummary], UsageStreak)? {
            var summaries: [LocalDate: StreakSummary] = [:]
            if let first = window.closedMonths.first {
                for row in months.rows {
                    let month = try row.decode("month", as: LocalDate.self)
                    guard month >= first, month < window.currentMonth, try row.decode("daily_completion_xp", as: Int.self) == award else { continue }
                    summaries[month] = StreakSummary(
                        completeDays: try row.decode("complete_days"),
                        lastCompleteDay: try row.decodeIfPresent("last_complete_date", as: LocalDate.self)?.dayNumber,
                        hasBreak: try row.decode("has_break"), leadingRun: try row.decode("leading_run"),
                        trailingRun: try row.decode("trailing_run"), longestRun: try row.decode("longest_run"))
                }
            }
            var latest: LocalDate?
            var run: ClosedRange<Int>?
            var found = false
            for row in runs.rows {
                latest = try row.decodeIfPresent("latest", as: LocalDate.self)
                guard !found, let first = try row.decodeIfPresent("first_day", as: LocalDate.self), first <= today else { continue }
                run = try row.decodeIfPresent("last_day", as: LocalDate.self).map { first.dayNumber...max(first.dayNumber, $0.dayNumber) }
                found = true
            }
            // Three runs read, all after today: an earlier one may be the one; read it as before.
            if !found, runs.rows.count >= 3 { return nil }
            return (summaries, UsageStreak.compute(latestRun: run, latestExit: latest, today: today))
        }
    }
}
