import Foundation
import HabitSyncDomain
import LibPQClient

/// Recomputes a user's derived records — globalStreak, userProgress, usageStreak — and keeps
/// the daily completion XP in the ledger, inside the transaction that changed their inputs
/// (it holds the user's row lock).
///
/// Incremental by default: the ledger's total is the running sum triggers keep on `users`, and
/// the streak folds stored month summaries (`derived_streak_months`) with the raw days of
/// today's month and of the months whose summaries a change deleted (the triggers of 0011).
/// So a push reads a bounded number of rows whatever the user's age: at most ten years of
/// month rows, plus the days its changes touched. `full` ignores every stored summary and
/// reads the whole history, as the recompute did before; it must produce the same records
/// (the property test compares the two after every random edit).
struct DerivedStateWriter {
    let connection: PGConnection
    let tenant: UUID
    let user: String
    let derivedRecordID: UUID
    let now: Date
    var full = false

    /// Writes what changed and returns the next free version. Four round trips in the usual
    /// case: the user's settings, habits and stored records; the month summaries and the
    /// latest exit run; the raw days and the ledger's awards; every write.
    func recompute(nextVersion: Int64) async throws -> Int64 {
        try await recompute(nextVersion: nextVersion, deferringWrites: false).next
    }

    /// The same; with `deferringWrites`, the writes are returned instead of sent, for the
    /// caller to send with statements of its own (a push's closing round trip): nothing reads
    /// them before that.
    func recompute(nextVersion: Int64, deferringWrites: Bool) async throws -> (next: Int64, writes: [PGQuery]) {
        var next = nextVersion
        var reads = [
            DerivedStateQueries.context(tenant: tenant, user: user), DerivedStateQueries.habits(tenant: tenant, user: user),
            DerivedStateQueries.storedStreak(tenant: tenant, user: user), DerivedStateQueries.storedProgress(tenant: tenant, user: user),
            DerivedStateQueries.storedUsageStreak(tenant: tenant, user: user),
        ]
        if full { reads.append(DerivedStateQueries.ledgerSum(tenant: tenant, user: user)) }
        // The incremental recompute also reads, in the same round trip, what it usually needs
        // next before it knows the user's zone, award and habits (`Prefetch`).
        let prefetch = full ? nil : Prefetch(now: now)
        if let prefetch { reads += prefetch.queries(tenant: tenant, user: user) }
        let first = try await connection.pipeline(reads)
        guard first.count == reads.count else { throw PGError(kind: .client, message: "the recompute's first reads returned \(first.count) results") }
        let prefetched = prefetch.map { _ in Array(first[(reads.count - 4)...]) }
        guard let settings = first[0].rows.first else { return (next, []) }
        let zoneName = try settings.decode("time_zone", as: String.self)
        let timeZone = TimeZone(identifier: zoneName) ?? TimeZone.gmt
        let award = try settings.decode("daily_completion_xp", as: Int.self)
        var ledgerSum = full ? try first[5].single().decode("total", as: Int.self) : try settings.decode("xp_ledger_sum", as: Int.self)
        let today = LocalDate(now, in: timeZone)
        let habits = try first[1].rows.compactMap(Self.habit)
        let storedStreak = first[2].rows.first, storedProgress = first[3].rows.first, storedUsage = first[4].rows.first

        let window = StreakWindow(today: today, earliestStart: habits.map(\.startDate).min())
        let stored: [LocalDate: StreakSummary]
        let usage: UsageStreak
        let builtIn = try settings.decodeIfPresent("exit_runs_zone", as: String.self)
        var fromPrefetch: ([LocalDate: StreakSummary], UsageStreak)?
        if let prefetch, let prefetched, builtIn == zoneName, prefetch.covers(window) {
            fromPrefetch = try prefetch.monthsAndUsage(months: prefetched[0], runs: prefetched[1], window: window, award: award, today: today)
        }
        if let fromPrefetch {
            (stored, usage) = fromPrefetch
        } else if full {
            stored = [:]
            let (exitDays, latestExit) = try await recentExits(zone: zoneName, today: today)
            usage = UsageStreak.compute(exitDays: exitDays, today: today, latestExit: latestExit)
        } else {
            (stored, usage) = try await storedMonthsAndUsage(window, award: award, zone: zoneName, builtIn: builtIn, today: today)
        }
        let dirty = window.closedMonths.filter { stored[$0] == nil }

        // Classify the days read raw: months without a summary, the window's partial first
        // month, and today's month. Daily completion XP: reconcile the ledger on every day
        // classified here, and on every later day (a day that is not complete, future ones
        // included, holds no award). Days in stored months were reconciled when their summary
        // was written. Without any stored summary, every day of the window is reconciled, as
        // the full recompute does.
        let rawRanges = dirty.map(StreakWindow.days(of:)) + [window.leadingDays, window.currentDays].compactMap { $0 }
        let awardRanges: [(first: LocalDate, last: LocalDate?)] =
            full || stored.isEmpty
            ? [(window.windowStart, nil)]
            : dirty.map { ($0, $0.firstOfNextMonth.adding(days: -1)) }
                + (window.leadingDays.map { [(LocalDate(dayNumber: $0.lowerBound), LocalDate(dayNumber: $0.upperBound))] } ?? [])
                + [(window.currentMonth, nil)]
        let days: [PGResult]
        let records: [DayRecord]
        if let prefetch, let prefetched, prefetch.covers(awardRanges: awardRanges, rawRanges: rawRanges) {
            // Read already: narrowed to the ranges here as the queries narrow them in SQL.
            days = [prefetched[2]]
            records = try prefetched[3].rows.compactMap(Self.dayRecord).filter { record in rawRanges.contains { $0.contains(record.date.dayNumber) } }
        } else {
            var dayReads = [DerivedStateQueries.netAwards(tenant: tenant, user: user, in: awardRanges)]
            if !rawRanges.isEmpty { dayReads.append(DerivedStateQueries.progress(tenant: tenant, user: user, habits: habits.map(\.id), in: rawRanges)) }
            days = try await connection.pipeline(dayReads)
            guard days.count == dayReads.count else { throw PGError(kind: .client, message: "the recompute's day reads returned \(days.count) results") }
            records = days.count > 1 ? try days[1].rows.compactMap(Self.dayRecord) : []
        }
        let inAwardRanges = { (date: LocalDate) in awardRanges.contains { date >= $0.first && ($0.last.map { date <= $0 } ?? true) } }

        let classifier = DayClassifier(habits: habits, records: records)
        var completeDays: Set<LocalDate> = []
        func classified(_ range: ClosedRange<Int>) -> [(dayNumber: Int, classification: DayClassification)] {
            let days = classifier.classify(from: range.lowerBound, through: range.upperBound)
            for day in days where day.classification == .complete { completeDays.insert(LocalDate(dayNumber: day.dayNumber)) }
            return days
        }
        let rebuilt = dirty.map { (month: $0, summary: StreakSummary(days: classified(StreakWindow.days(of: $0)))) }
        let rebuiltByMonth = Dictionary(uniqueKeysWithValues: rebuilt.map { ($0.month, $0.summary) })
        var history = window.leadingDays.map { StreakSummary(days: classified($0)) } ?? .empty
        for month in window.closedMonths {
            history = history.followed(by: stored[month] ?? rebuiltByMonth[month] ?? .empty)
        }
        if let current = window.currentDays {
            let days = classified(current)
            history = history.followed(by: StreakSummary(days: days.dropLast()))
            if let last = days.last { history = history.followed(by: .today(last.dayNumber, last.classification)) }
        }

        var netAwards: [LocalDate: Int] = [:]
        for row in days[0].rows {
            if let date = try row.decodeIfPresent("date", as: LocalDate.self), inAwardRanges(date) { netAwards[date] = try row.decode("amount", as: Int.self) }
        }
        let corrections = DailyCompletionXP.corrections(completeDays: completeDays, netAwards: netAwards, setting: award)
            .filter { abs($0.amount) <= 100_000 }
        var writes: [PGQuery] = []
        if !corrections.isEmpty {
            let versions = corrections.map { _ -> Int64 in
                defer { next += 1 }; return next
            }
            writes.append(DerivedStateQueries.insertAwards(tenant: tenant, user: user, now: now, corrections: corrections, versions: versions))
            ledgerSum += corrections.reduce(0) { $0 + $1.amount }
        }
        if !rebuilt.isEmpty {
            writes.append(DerivedStateQueries.saveMonths(tenant: tenant, user: user, award: award, months: rebuilt))
        }

        if habits.isEmpty && ledgerSum == 0 && usage.lastActivityDate == nil {
            let others = try await connection.query(DerivedStateQueries.hasOtherInputs(tenant: tenant, user: user)).single()
            guard try others.decode("has_inputs", as: Bool.self) else {
                if deferringWrites { return (next, writes) }
                _ = try await connection.pipeline(writes)
                return (next, [])
            }
        }
        let streak = history.streak(today: today)
        let progress = UserProgress(ledgerSum: ledgerSum)
        // A derived record is written (and gets a new version) only when a value changed.
        let wanted: [(unchanged: Bool, write: (Int64) -> PGQuery)] = [
            (try Self.stored(storedStreak, equals: streak), { version in self.upsertStreak(streak, version: version) }),
            (try Self.stored(storedProgress, equals: progress), { version in self.upsertProgress(progress, version: version) }),
            (try Self.stored(storedUsage, equals: usage), { version in self.upsertUsage(usage, version: version) }),
        ]
        for item in wanted where !item.unchanged {
            writes.append(item.write(next))
            next += 1
        }
        if deferringWrites { return (next, writes) }
        _ = try await connection.pipeline(writes)
        return (next, [])
    }

    /// The stored month summaries the window can use, by month, and the usage streak from the
    /// runs of exit days the trigger of 0011 keeps (rebuilt first from every exit when they were
    /// built in another time zone, or never): one round trip.
    private func storedMonthsAndUsage(
        _ window: StreakWindow, award: Int, zone: String, builtIn: String?,
        today: LocalDate
    ) async throws -> ([LocalDate: StreakSummary], UsageStreak) {
        var queries: [PGQuery] = []
        if let first = window.closedMonths.first {
            queries.append(DerivedStateQueries.storedMonths(tenant: tenant, user: user, first: first, end: window.currentMonth, award: award))
        }
        if builtIn != zone {
            queries += [
                DerivedStateQueries.forgetExitRuns(tenant: tenant, user: user, zone: zone),
                DerivedStateQueries.rebuildExitRuns(tenant: tenant, user: user, zone: zone),
            ]
        }
        queries.append(DerivedStateQueries.latestExitRun(tenant: tenant, user: user, today: today))
        let results = try await connection.pipeline(queries)
        guard results.count == queries.count, let runs = results.last else {
            throw PGError(kind: .client, message: "the recompute's month reads returned \(results.count) results")
        }
        var months: [LocalDate: StreakSummary] = [:]
        for row in window.closedMonths.isEmpty ? [] : results[0].rows {
            let month = try row.decode("month", as: LocalDate.self)
            months[month] = StreakSummary(
                completeDays: try row.decode("complete_days"),
                lastCompleteDay: try row.decodeIfPresent("last_complete_date", as: LocalDate.self)?.dayNumber,
                hasBreak: try row.decode("has_break"), leadingRun: try row.decode("leading_run"),
                trailingRun: try row.decode("trailing_run"), longestRun: try row.decode("longest_run"))
        }
        let row = try runs.single()
        let first = try row.decodeIfPresent("first_day", as: LocalDate.self)
        let last = try row.decodeIfPresent("last_day", as: LocalDate.self)
        let latest = try row.decodeIfPresent("latest", as: LocalDate.self)
        let run = first.flatMap { first in last.map { first.dayNumber...max(first.dayNumber, $0.dayNumber) } }
        return (months, UsageStreak.compute(latestRun: run, latestExit: latest, today: today))
    }

    /// The full recompute reads the exit days themselves: the days back to the start of the
    /// current run, widening the window while the run reaches its edge.
    private func recentExits(zone: String, today: LocalDate) async throws -> (days: Set<LocalDate>, latest: LocalDate?) {
        var window = 62
        var exitDays: Set<LocalDate> = []
        while true {
            let since = now.addingTimeInterval(-Double(window + 2) * 86_400)
            exitDays = Set(
                try await connection.query(DerivedStateQueries.exitDays(tenant: tenant, user: user, zone: zone, since: since)).rows.map {
                    try $0.decode("day", as: LocalDate.self)
                })
            let run = UsageStreak.compute(exitDays: exitDays, today: today)
            guard let start = run.startDate, start.dayNumber <= today.dayNumber - window, window < 40_000 else { break }
            window *= 4
        }
        var latest = exitDays.max()
        if latest == nil {
            latest = try await connection.query(DerivedStateQueries.latestExit(tenant: tenant, user: user, zone: zone)).rows.first?
                .decodeIfPresent("day", as: LocalDate.self)
        }
        return (exitDays, latest)
    }

    // MARK: - Rows

    static func dayRecord(_ row: PGRow) throws -> DayRecord? {
        guard let date = try row.decodeIfPresent("date", as: LocalDate.self) else { return nil }
        return DayRecord(
            habitID: try row.decode("habit_id"), date: date, progressCount: try row.decode("progress_count"),
            goalCount: try row.decode("goal_count"), skipped: try row.decode("skipped"))
    }

    static func habit(_ row: PGRow) throws -> HabitDefinition? {
        guard let start = try row.decodeIfPresent("start_date", as: LocalDate.self) else { return nil }
        let n = try row.decodeIfPresent("schedule_n", as: Int.self)
        let schedule: HabitSchedule
        switch try row.decode("schedule_type", as: String.self) {
        case "daily": schedule = .daily
        case "everyNDays": schedule = .everyNDays(max(1, n ?? 1))
        case "specificWeekdays": schedule = .specificWeekdays((try row.decodeIfPresent("schedule_weekdays", as: [String].self) ?? []).compactMap(Weekday.init(rawValue:)))
        case "frequencyWeekly": schedule = .frequencyWeekly(n ?? 1)
        default: schedule = .frequencyMonthly(n ?? 1)
        }
        return HabitDefinition(
            id: try row.decode("id"), habitType: try row.decode("habit_type"), schedule: schedule, startDate: start,
            endDate: try row.decodeIfPresent("end_date", as: LocalDate.self))
    }

    // MARK: - Stored against recomputed, value by value (a missing row is never equal)

    static func stored(_ row: PGRow?, equals streak: GlobalStreak) throws -> Bool {
        guard let row else { return false }
        return try row.decode("current_streak", as: Int.self) == streak.currentStreak
            && row.decode("longest_streak", as: Int.self) == streak.longestStreak
            && row.decode("total_complete_days", as: Int.self) == streak.totalCompleteDays
            && row.decodeIfPresent("last_complete_date", as: LocalDate.self) == streak.lastCompleteDate
            && row.decode("computed_for", as: LocalDate.self) == streak.computedFor
    }

    static func stored(_ row: PGRow?, equals progress: UserProgress) throws -> Bool {
        guard let row else { return false }
        return try row.decode("total_xp", as: Int.self) == progress.totalXP
            && row.decode("current_level", as: Int.self) == progress.currentLevel
            && row.decode("xp_for_current_level", as: Int.self) == progress.xpForCurrentLevel
            && row.decode("xp_for_next_level", as: Int.self) == progress.xpForNextLevel
    }

    static func stored(_ row: PGRow?, equals usage: UsageStreak) throws -> Bool {
        guard let row else { return false }
        return try row.decodeIfPresent("start_date", as: LocalDate.self) == usage.startDate
            && row.decode("current_day_count", as: Int.self) == usage.currentDayCount
            && row.decodeIfPresent("last_activity_date", as: LocalDate.self) == usage.lastActivityDate
            && row.decode("computed_for", as: LocalDate.self) == usage.computedFor
    }

    func upsertStreak(_ s: GlobalStreak, version: Int64) -> PGQuery {
        """
        INSERT INTO global_streaks (tenant_id, user_id, id, current_streak, longest_streak, total_complete_days, last_complete_date, computed_for, updated_at, updated_by, server_version)
        VALUES (\(tenant), \(user), \(derivedRecordID), \(s.currentStreak), \(s.longestStreak), \(s.totalCompleteDays), \(s.lastCompleteDate)::date, \(s.computedFor)::date, date_trunc('milliseconds', now()), \(ServerDevice.sql), \(version))
        ON CONFLICT (tenant_id, user_id) DO UPDATE SET current_streak = EXCLUDED.current_streak, longest_streak = EXCLUDED.longest_streak,
            total_complete_days = EXCLUDED.total_complete_days, last_complete_date = EXCLUDED.last_complete_date, computed_for = EXCLUDED.computed_for,
            updated_at = EXCLUDED.updated_at, updated_by = \(ServerDevice.sql), server_version = EXCLUDED.server_version, synced_at = EXCLUDED.synced_at
        """
    }

    func upsertProgress(_ p: UserProgress, version: Int64) -> PGQuery {
        """
        INSERT INTO user_progress (tenant_id, user_id, id, total_xp, current_level, xp_for_current_level, xp_for_next_level, updated_at, updated_by, server_version)
        VALUES (\(tenant), \(user), \(derivedRecordID), \(p.totalXP), \(p.currentLevel), \(p.xpForCurrentLevel), \(p.xpForNextLevel), date_trunc('milliseconds', now()), \(ServerDevice.sql), \(version))
        ON CONFLICT (tenant_id, user_id) DO UPDATE SET total_xp = EXCLUDED.total_xp, current_level = EXCLUDED.current_level,
            xp_for_current_level = EXCLUDED.xp_for_current_level, xp_for_next_level = EXCLUDED.xp_for_next_level,
            updated_at = EXCLUDED.updated_at, updated_by = \(ServerDevice.sql), server_version = EXCLUDED.server_version, synced_at = EXCLUDED.synced_at
        """
    }

    func upsertUsage(_ u: UsageStreak, version: Int64) -> PGQuery {
        """
        INSERT INTO usage_streaks (tenant_id, user_id, id, start_date, current_day_count, last_activity_date, computed_for, updated_at, updated_by, server_version)
        VALUES (\(tenant), \(user), \(derivedRecordID), \(u.startDate)::date, \(u.currentDayCount), \(u.lastActivityDate)::date, \(u.computedFor)::date, date_trunc('milliseconds', now()), \(ServerDevice.sql), \(version))
        ON CONFLICT (tenant_id, user_id) DO UPDATE SET start_date = EXCLUDED.start_date, current_day_count = EXCLUDED.current_day_count,
            last_activity_date = EXCLUDED.last_activity_date, computed_for = EXCLUDED.computed_for,
            updated_at = EXCLUDED.updated_at, updated_by = \(ServerDevice.sql), server_version = EXCLUDED.server_version, synced_at = EXCLUDED.synced_at
        """
    }
}
