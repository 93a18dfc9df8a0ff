import Foundation
import HabitSyncDomain
import LibPQClient

/// The SQL of `DerivedStateWriter`, one statement each; every value is a bind.
enum DerivedStateQueries {
    /// The user's calendar, the tenant's award, the ledger's running total (with what this
    /// push's XP writes set aside for it, `PushStore.pendingXPLedger`), and the zone the runs
    /// of exit days were built in.
    static func context(tenant: UUID, user: String) -> PGQuery {
        """
        SELECT u.time_zone, t.daily_completion_xp, u.xp_ledger_sum + \(PushStore.pendingXPLedger) AS xp_ledger_sum, u.exit_runs_zone
        FROM users u JOIN tenants t ON t.id = u.tenant_id
        WHERE u.tenant_id = \(tenant) AND u.user_id = \(user)
        """
    }

    /// Whether a user without habits, XP or exits has any other input (live progress, or a
    /// past award to take back); without one, no derived record is created. Asked only then.
    static func hasOtherInputs(tenant: UUID, user: String) -> PGQuery {
        """
        SELECT EXISTS (SELECT 1 FROM daily_progress WHERE tenant_id = \(tenant) AND user_id = \(user) AND deleted_at IS NULL)
            OR EXISTS (SELECT 1 FROM xp_transactions WHERE tenant_id = \(tenant) AND user_id = \(user) AND date IS NOT NULL
                       AND updated_by = \(ServerDevice.sql) AND reason IN ('daily_completion', 'daily_completion_reversed')) AS has_inputs
        """
    }

    /// The ledger summed from its rows, which the full recompute uses to check the running total.
    static func ledgerSum(tenant: UUID, user: String) -> PGQuery {
        "SELECT coalesce(sum(amount), 0)::int8 AS total FROM xp_transactions WHERE tenant_id = \(tenant) AND user_id = \(user)"
    }

    static func habits(tenant: UUID, user: String) -> PGQuery {
        """
        SELECT id, habit_type, schedule_type, schedule_n, schedule_weekdays, start_date, end_date
        FROM habits WHERE tenant_id = \(tenant) AND user_id = \(user) AND deleted_at IS NULL
        """
    }

    /// Every stored month summary from `first` on, with the award it was written under: read
    /// before the user's time zone, award and habits are known (`DerivedStateWriter`'s
    /// prefetch), and narrowed in Swift as `storedMonths` narrows in SQL.
    static func storedMonthsFrom(tenant: UUID, user: String, first: LocalDate) -> PGQuery {
        """
        SELECT month, complete_days, last_complete_date, has_break, leading_run, trailing_run, longest_run, daily_completion_xp
        FROM derived_streak_months WHERE tenant_id = \(tenant) AND user_id = \(user) AND month >= \(first)
        """
    }

    /// The latest exit runs (a few: the one `latestExitRun` picks is the latest that starts
    /// by today in any time zone) and the latest exit day, for the prefetch.
    static func latestExitRuns(tenant: UUID, user: String) -> PGQuery {
        """
        SELECT r.first_day, r.last_day,
               (SELECT max(last_day) FROM usage_exit_runs WHERE tenant_id = \(tenant) AND user_id = \(user)) AS latest
        FROM (SELECT 1) one
        LEFT JOIN LATERAL (SELECT first_day, last_day FROM usage_exit_runs WHERE tenant_id = \(tenant) AND user_id = \(user)
                           ORDER BY first_day DESC LIMIT 3) r ON true
        """
    }

    /// `progress` of every live habit from `first` through `last`, the habits found in SQL.
    static func progressOfLiveHabits(tenant: UUID, user: String, first: LocalDate, last: LocalDate) -> PGQuery {
        """
        SELECT p.habit_id, p.date, p.progress_count, p.goal_count, p.skipped
        FROM habits hb
        CROSS JOIN LATERAL (
            SELECT habit_id, date, progress_count, goal_count, skip_reason IS NOT NULL AS skipped FROM daily_progress
            WHERE tenant_id = \(tenant) AND user_id = \(user) AND habit_id = hb.id AND date >= \(first) AND date <= \(last) AND deleted_at IS NULL
            OFFSET 0) p
        WHERE hb.tenant_id = \(tenant) AND hb.user_id = \(user) AND hb.deleted_at IS NULL
        """
    }

    /// Stored month summaries from `first` up to (not including) `end`, written under `award`.
    static func storedMonths(tenant: UUID, user: String, first: LocalDate, end: LocalDate, award: Int) -> PGQuery {
        """
        SELECT month, complete_days, last_complete_date, has_break, leading_run, trailing_run, longest_run
        FROM derived_streak_months
        WHERE tenant_id = \(tenant) AND user_id = \(user) AND month >= \(first) AND month < \(end)
          AND daily_completion_xp = \(award)
        """
    }

    /// Live progress of the user's live habits on the days of some disjoint ranges (inclusive
    /// bounds), through the natural key (tenant, user, habit, date): one index descent per
    /// habit and range, and no index of its own for every progress write to maintain.
    /// `OFFSET 0` keeps the planner from flattening the lateral subquery into a join, and the
    /// habit is an equality per probe, not `habit_id = ANY(…)`: with the array the planner
    /// left the habit out of the index condition when it had no statistics, and walked the
    /// user's whole history once per range (13 ms a push for a ten-year user).
    /// Adjacent ranges are read as one (`DayRanges.coalesced`): a new ten-year habit's 120
    /// months are one probe, not 120 (1,000 such habits: 122,000 probes, about a second).
    static func progress(tenant: UUID, user: String, habits: [UUID], in ranges: [ClosedRange<Int>]) -> PGQuery {
        let ranges = DayRanges.coalesced(ranges)
        return """
            SELECT p.habit_id, p.date, p.progress_count, p.goal_count, p.skipped
            FROM unnest(\(habits)::uuid[]) AS hb(id)
            CROSS JOIN unnest(\(ranges.map { LocalDate(dayNumber: $0.lowerBound) })::date[], \(ranges.map { LocalDate(dayNumber: $0.upperBound) })::date[]) AS r(lo, hi)
            CROSS JOIN LATERAL (
                SELECT habit_id, date, progress_count, goal_count, skip_reason IS NOT NULL AS skipped FROM daily_progress
                WHERE tenant_id = \(tenant) AND user_id = \(user) AND habit_id = hb.id AND date >= r.lo AND date <= r.hi AND deleted_at IS NULL
                OFFSET 0) p
            """
    }

    /// The server's net daily award per date, on the days of some disjoint ranges; an upper
    /// bound of nil is open-ended. One index range scan per range, as for `progress`.
    static func netAwards(tenant: UUID, user: String, in ranges: [(first: LocalDate, last: LocalDate?)]) -> PGQuery {
        """
        SELECT x.date, sum(x.amount)::int8 AS amount
        FROM unnest(\(ranges.map(\.first.description))::date[], \(ranges.map { $0.last?.description ?? "infinity" })::date[]) AS r(lo, hi)
        CROSS JOIN LATERAL (
            SELECT date, amount FROM xp_transactions
            WHERE tenant_id = \(tenant) AND user_id = \(user) AND date >= r.lo AND date <= r.hi
              AND updated_by = \(ServerDevice.sql) AND reason IN ('daily_completion', 'daily_completion_reversed')
            OFFSET 0) x
        GROUP BY x.date
        """
    }

    /// Every date's net server award where it is not zero (the audit's view of the ledger).
    static func allNetAwards(tenant: UUID, user: String) -> PGQuery {
        """
        SELECT date, sum(amount)::int8 AS amount FROM xp_transactions
        WHERE tenant_id = \(tenant) AND user_id = \(user) AND updated_by = \(ServerDevice.sql) AND reason IN ('daily_completion', 'daily_completion_reversed') AND date IS NOT NULL
        GROUP BY date HAVING sum(amount) <> 0
        """
    }

    static func insertAwards(tenant: UUID, user: String, now: Date, corrections: [DailyCompletionXP.Correction], versions: [Int64]) -> PGQuery {
        """
        INSERT INTO xp_transactions (tenant_id, user_id, id, amount, reason, occurred_at, date, updated_at, updated_by, server_version)
        SELECT owner.tenant_id, owner.user_id, a.id, a.amount, a.reason, \(now), a.date, date_trunc('milliseconds', \(now)::timestamptz), \(ServerDevice.sql), a.version
        FROM unnest(\(corrections.map { _ in UUID() })::uuid[], \(corrections.map { Int32($0.amount) })::int4[], \(corrections.map(\.reason))::text[],
                    \(corrections.map(\.date))::date[], \(versions)::int8[])
            AS a(id, amount, reason, date, version)
        CROSS JOIN \(OwnerRow.relation(tenant: tenant, user: user))
        """
    }

    /// The user's ids from `OwnerRow`, so that Citus writes them on the user's shard (with
    /// them as binds it gathered the rows on the coordinator and committed in two phases).
    static func saveMonths(tenant: UUID, user: String, award: Int, months: [(month: LocalDate, summary: StreakSummary)]) -> PGQuery {
        let summaries = months.map(\.summary)
        return """
            INSERT INTO derived_streak_months (tenant_id, user_id, month, daily_completion_xp, complete_days, last_complete_date, has_break, leading_run, trailing_run, longest_run)
            SELECT owner.tenant_id, owner.user_id, m.month, \(award), m.complete_days, m.last_complete_date, m.has_break, m.leading_run, m.trailing_run, m.longest_run
            FROM unnest(\(months.map(\.month))::date[], \(summaries.map { Int32($0.completeDays) })::int4[],
                        \(summaries.map { $0.lastCompleteDay.map(LocalDate.init(dayNumber:)) })::date[], \(summaries.map(\.hasBreak))::bool[],
                        \(summaries.map { Int32($0.leadingRun) })::int4[], \(summaries.map { Int32($0.trailingRun) })::int4[], \(summaries.map { Int32($0.longestRun) })::int4[])
                AS m(month, complete_days, last_complete_date, has_break, leading_run, trailing_run, longest_run)
            CROSS JOIN \(OwnerRow.relation(tenant: tenant, user: user))
            ON CONFLICT (tenant_id, user_id, month) DO UPDATE SET daily_completion_xp = EXCLUDED.daily_completion_xp,
                complete_days = EXCLUDED.complete_days, last_complete_date = EXCLUDED.last_complete_date, has_break = EXCLUDED.has_break,
                leading_run = EXCLUDED.leading_run, trailing_run = EXCLUDED.trailing_run, longest_run = EXCLUDED.longest_run
            """
    }

    /// Exit days since an instant, from the id registry, which keeps the exits of months
    /// maintenance archived.
    static func exitDays(tenant: UUID, user: String, zone: String, since: Date) -> PGQuery {
        """
        SELECT DISTINCT (occurred_at AT TIME ZONE \(zone))::date AS day FROM usage_event_ids
        WHERE tenant_id = \(tenant) AND user_id = \(user) AND is_exit AND occurred_at >= \(since)
        """
    }

    static func latestExit(tenant: UUID, user: String, zone: String) -> PGQuery {
        """
        SELECT (max(occurred_at) AT TIME ZONE \(zone))::date AS day FROM usage_event_ids
        WHERE tenant_id = \(tenant) AND user_id = \(user) AND is_exit
        """
    }

    /// Forgets the user's runs of exit days, and records the zone they are rebuilt in.
    static func forgetExitRuns(tenant: UUID, user: String, zone: String) -> PGQuery {
        """
        WITH built AS (UPDATE users SET exit_runs_zone = \(zone) WHERE tenant_id = \(tenant) AND user_id = \(user))
        DELETE FROM usage_exit_runs WHERE tenant_id = \(tenant) AND user_id = \(user)
        """
    }

    /// The runs of consecutive exit days in `zone` (gaps and islands: within a run, the day
    /// minus its rank is constant).
    static func rebuildExitRuns(tenant: UUID, user: String, zone: String) -> PGQuery {
        """
        INSERT INTO usage_exit_runs (tenant_id, user_id, first_day, last_day)
        SELECT owner.tenant_id, owner.user_id, min(d.day), max(d.day)
        FROM (SELECT day, day - (row_number() OVER (ORDER BY day))::int AS island
              FROM (SELECT DISTINCT (occurred_at AT TIME ZONE \(zone))::date AS day FROM usage_event_ids
                    WHERE tenant_id = \(tenant) AND user_id = \(user) AND is_exit) days) d
        CROSS JOIN \(OwnerRow.relation(tenant: tenant, user: user))
        GROUP BY owner.tenant_id, owner.user_id, d.island
        """
    }

    /// The latest run of exit days that starts by today, and the latest exit day overall.
    static func latestExitRun(tenant: UUID, user: String, today: LocalDate) -> PGQuery {
        """
        SELECT r.first_day, r.last_day,
               (SELECT max(last_day) FROM usage_exit_runs WHERE tenant_id = \(tenant) AND user_id = \(user)) AS latest
        FROM (SELECT 1) one
        LEFT JOIN LATERAL (SELECT first_day, last_day FROM usage_exit_runs WHERE tenant_id = \(tenant) AND user_id = \(user) AND first_day <= \(today)
                           ORDER BY first_day DESC LIMIT 1) r ON true
        """
    }

    /// The derived records as a device receives them (the record functions' wire JSON), for
    /// the audit's snapshot. Rows go in as `ROW(x.*)::table`: on a Citus shard a row has the
    /// shard's type.
    static func derivedWireRecords(tenant: UUID, user: String) -> PGQuery {
        """
        SELECT 'globalStreak' AS kind, habitsync_global_streak_record(ROW(g.*)::global_streaks)::text AS record FROM global_streaks g WHERE tenant_id = \(tenant) AND user_id = \(user)
        UNION ALL SELECT 'userProgress', habitsync_user_progress_record(ROW(p.*)::user_progress)::text FROM user_progress p WHERE tenant_id = \(tenant) AND user_id = \(user)
        UNION ALL SELECT 'usageStreak', habitsync_usage_streak_record(ROW(s.*)::usage_streaks)::text FROM usage_streaks s WHERE tenant_id = \(tenant) AND user_id = \(user)
        """
    }

    /// The derived records as stored, the columns a device receives, to compare with the
    /// recomputed values (`DerivedStateWriter.stored…`).
    static func storedStreak(tenant: UUID, user: String) -> PGQuery {
        """
        SELECT current_streak, longest_streak, total_complete_days, last_complete_date, computed_for
        FROM global_streaks WHERE tenant_id = \(tenant) AND user_id = \(user)
        """
    }

    static func storedProgress(tenant: UUID, user: String) -> PGQuery {
        """
        SELECT total_xp, current_level, xp_for_current_level, xp_for_next_level
        FROM user_progress WHERE tenant_id = \(tenant) AND user_id = \(user)
        """
    }

    static func storedUsageStreak(tenant: UUID, user: String) -> PGQuery {
        """
        SELECT start_date, current_day_count, last_activity_date, computed_for
        FROM usage_streaks WHERE tenant_id = \(tenant) AND user_id = \(user)
        """
    }
}
