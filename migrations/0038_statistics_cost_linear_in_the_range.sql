-- Statistics cost what the asked range holds, whatever the planner believes about the user.
--
-- 0022 generated only the range's days, but two joins still let the planner's row estimates
-- decide whether the cost followed the range. A user with more habits or history than the
-- table's average (and any user whose rows came after the last ANALYZE) is estimated at a row
-- or two, and then:
--   * the per-habit statistics joined habits a second time for the name and schedule, as a
--     nested loop over the user's habits for each of them: 1,000 habits made 500,000 rows
--     and 557,000 buffer reads for a 30-day range (0.35 s on a quiet machine, the statement
--     timeout on a busy one: the suite's StatsCostTests failed in CI);
--   * each habit-day's progress was probed by (habit, date); believing the user holds a row
--     or two, the planner finds the primary key's (tenant, user) prefix exactly as cheap as
--     the natural key, took it, and each probe read the user's every record: a week of 300
--     habits with 200 days of history read 126 million rows (85 s) on a request session
--     (PlansWithoutStatisticsTests). Stating the natural key's predicate (habit_id IS NOT
--     NULL, 0028) does not change that tie.
-- Now the habit's name and schedule come with its days (no second join), and each habit's
-- records in the range are read in date order by one scan of the natural key (tenant, user,
-- habit, date range). The primary key gives that order only through a sort, and the two
-- statistics functions run with enable_sort off: whatever the planner believes about the
-- user, a sort costs more than any plan without one, so the natural key is the plan (the
-- GROUP BYs hash instead). The range is the one asked, as constants (a bound computed from
-- the user's time zone is not leakproof: under row-level security it would be a filter after
-- the habit's whole history). The records meet the habit's generated days in a GROUP BY on
-- the date, not a join a nested loop could make quadratic in the range (days times records
-- per habit: billions for a ten-year range). The rows, keys and values the functions return
-- are unchanged. (analytics.habit_days, which analysts read on sessions that may scan, keeps
-- its join.)
SET LOCAL citus.enable_ddl_propagation TO off;

CREATE OR REPLACE FUNCTION analytics.user_habit_days_query(p_tenant uuid, p_user text) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$
        SELECT format($query$
            SELECT h.tenant_id, h.user_id, h.id AS habit_id, x.date,
                   h.schedule_type IN ('daily', 'everyNDays', 'specificWeekdays') AS fixed_schedule,
                   x.skipped,
                   h.schedule_type IN ('daily', 'everyNDays', 'specificWeekdays')
                       AND habitsync_is_due(h.schedule_type, h.schedule_n, h.schedule_weekdays, h.start_date, h.end_date, x.date)
                       AND NOT x.skipped AS due,
                   x.recorded AND NOT x.skipped AND x.goal_met AS completed,
                   h.name AS habit_name, h.schedule_type, h.schedule_n
            FROM habits h
            JOIN users u ON u.tenant_id = h.tenant_id AND u.user_id = h.user_id
            CROSS JOIN LATERAL (SELECT greatest(h.start_date, $1, (now() AT TIME ZONE u.time_zone)::date - 3660) AS first_day,
                                       least(h.end_date, $2, (now() AT TIME ZONE u.time_zone)::date) AS last_day) b
            CROSS JOIN LATERAL (
                SELECT k.date, bool_or(k.recorded) AS recorded, bool_or(k.skipped) AS skipped, bool_or(k.goal_met) AS goal_met
                FROM (
                    SELECT d.day::date AS date, false AS recorded, false AS skipped, false AS goal_met
                    FROM generate_series(b.first_day, b.last_day, interval '1 day') AS d(day)
                    UNION ALL
                    (SELECT p.date, true, p.skip_reason IS NOT NULL,
                            CASE h.habit_type WHEN 'breaking' THEN p.progress_count <= p.goal_count ELSE p.progress_count >= p.goal_count END
                     FROM daily_progress p
                     WHERE p.tenant_id = %1$L AND p.user_id = %2$L AND p.habit_id IS NOT NULL AND p.habit_id = h.id
                       AND p.date BETWEEN $1 AND $2 AND p.deleted_at IS NULL
                     ORDER BY p.date)
                ) k
                GROUP BY k.date
                HAVING k.date BETWEEN b.first_day AND b.last_day
            ) x
            WHERE h.deleted_at IS NULL AND h.tenant_id = %1$L AND h.user_id = %2$L AND u.tenant_id = %1$L AND u.user_id = %2$L
            $query$, p_tenant, p_user)
    $$;
COMMENT ON FUNCTION analytics.user_habit_days_query(uuid, text) IS 'The text of a query of one user''s analytics.habit_days rows for the days $1…$2 only, with each habit''s name and schedule: one range scan of the natural key per habit and a GROUP BY on the date, so its cost follows the range (migration 0038); the statistics functions run it.';

CREATE OR REPLACE FUNCTION analytics.user_habit_completion_between(p_tenant uuid, p_user text, from_date date, to_date date)
    RETURNS TABLE (tenant_id uuid, user_id text, habit_id uuid, habit_name text, schedule_type text, due_days bigint,
                   completed_days bigint, completion_rate numeric, struggling boolean)
    LANGUAGE plpgsql STABLE
    SET enable_sort = off
    AS $$
BEGIN
    RETURN QUERY EXECUTE format($query$
        WITH per_habit AS (
            SELECT d.tenant_id, d.user_id, d.habit_id, d.habit_name, d.schedule_type, d.schedule_n,
                   bool_or(d.fixed_schedule) AS fixed,
                   count(*) FILTER (WHERE d.due) AS due_days,
                   count(*) FILTER (WHERE d.completed) AS completed_days,
                   count(*) FILTER (WHERE d.due AND d.completed) AS completed_due_days,
                   count(*) FILTER (WHERE NOT d.skipped) AS open_days
            FROM (%s) d
            WHERE d.date BETWEEN $1 AND $2
            GROUP BY d.tenant_id, d.user_id, d.habit_id, d.habit_name, d.schedule_type, d.schedule_n
        ), rated AS (
            SELECT *, round(CASE WHEN fixed THEN completed_due_days::numeric / nullif(due_days, 0)
                                 ELSE completed_days::numeric / nullif(ceil(open_days * schedule_n / CASE schedule_type WHEN 'frequencyWeekly' THEN 7.0 ELSE 30.0 END), 0)
                            END, 4) AS rate
            FROM per_habit
        )
        SELECT tenant_id, user_id, habit_id, habit_name, schedule_type, due_days, completed_days, rate, coalesce(rate < 0.5, false)
        FROM rated
        $query$,
        CASE WHEN p_user IS NULL
            THEN 'SELECT hd.*, h.name AS habit_name, h.schedule_type, h.schedule_n FROM analytics.habit_days hd
                  JOIN habits h ON h.tenant_id = hd.tenant_id AND h.user_id = hd.user_id AND h.id = hd.habit_id'
            ELSE analytics.user_habit_days_query(p_tenant, p_user) END)
    USING from_date, to_date;
END
$$;
COMMENT ON FUNCTION analytics.user_habit_completion_between(uuid, text, date, date) IS 'habit_completion_rates over the days from_date…to_date for one user (every user when p_user is NULL); the stats API''s /v1/stats/habits. For one user only the range''s days are generated and read (migration 0038).';

-- The per-day statistics run the same days (their body is unchanged).
ALTER FUNCTION analytics.user_daily_habit_completion_between(uuid, text, date, date) SET enable_sort = off;
