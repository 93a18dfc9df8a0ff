-- Statistics cost what the asked range holds, not the user's whole history.
--
-- GET /v1/stats/habits read analytics.habit_days (0005), which generates every day of every
-- habit's life (up to ten years) and filtered the range afterwards: a user with 1,000 ten-year
-- habits took about 15.7 s for any range, past the 5 s statement timeout, so the API answered
-- 503 every time. Here the days are generated only inside the range:
--
--   analytics.user_habit_days_query(tenant, user)  the text of one user's habit_days rows for
--                                                  the days $1…$2 (one body, used twice below)
--   analytics.user_habit_completion_between(…)     per habit over the range (replaces 0017's
--                                                  body for one user; NULL user still reads
--                                                  the view, as analysts' queries do)
--   analytics.user_daily_habit_completion_between(…) per day over the range, as
--                                                  analytics.daily_habit_completion
--   analytics.user_habit_days_in_range(…)          how many habit-days a range holds: what the
--                                                  API checks before it computes (docs/derived-state.md)
--
-- The user is written into each query as a literal (format %L), as in 0017, so on Citus it
-- runs on the user's worker. These functions live on the coordinator only.
SET LOCAL citus.enable_ddl_propagation TO off;

CREATE FUNCTION analytics.user_habit_days_query(p_tenant uuid, p_user text) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$
        SELECT format($query$
            SELECT h.tenant_id, h.user_id, h.id AS habit_id, d.day::date AS date,
                   h.schedule_type IN ('daily', 'everyNDays', 'specificWeekdays') AS fixed_schedule,
                   coalesce(p.skip_reason IS NOT NULL, false) AS skipped,
                   h.schedule_type IN ('daily', 'everyNDays', 'specificWeekdays')
                       AND habitsync_is_due(h.schedule_type, h.schedule_n, h.schedule_weekdays, h.start_date, h.end_date, d.day::date)
                       AND p.skip_reason IS NULL AS due,
                   p.id IS NOT NULL AND p.skip_reason IS NULL
                       AND CASE h.habit_type WHEN 'breaking' THEN p.progress_count <= p.goal_count ELSE p.progress_count >= p.goal_count END AS completed
            FROM habits h
            JOIN users u ON u.tenant_id = h.tenant_id AND u.user_id = h.user_id
            CROSS JOIN LATERAL generate_series(greatest(h.start_date, $1, (now() AT TIME ZONE u.time_zone)::date - 3660),
                                               least(h.end_date, $2, (now() AT TIME ZONE u.time_zone)::date), interval '1 day') AS d(day)
            LEFT JOIN daily_progress p ON p.tenant_id = h.tenant_id AND p.user_id = h.user_id AND p.habit_id = h.id
                                      AND p.date = d.day::date AND p.deleted_at IS NULL
            WHERE h.deleted_at IS NULL AND h.tenant_id = %1$L AND h.user_id = %2$L AND u.tenant_id = %1$L AND u.user_id = %2$L
            $query$, p_tenant, p_user)
    $$;
COMMENT ON FUNCTION analytics.user_habit_days_query(uuid, text) IS 'The text of a query of one user''s analytics.habit_days rows for the days $1…$2 only (its cost follows the range); the statistics functions run it.';

CREATE OR REPLACE FUNCTION analytics.user_habit_completion_between(p_tenant uuid, p_user text, from_date date, to_date date)
    RETURNS TABLE (tenant_id uuid, user_id text, habit_id uuid, habit_name text, schedule_type text, due_days bigint,
                   completed_days bigint, completion_rate numeric, struggling boolean)
    LANGUAGE plpgsql STABLE
    AS $$
BEGIN
    RETURN QUERY EXECUTE format($query$
        WITH per_habit AS (
            SELECT d.tenant_id, d.user_id, d.habit_id, h.name, h.schedule_type, h.schedule_n,
                   bool_or(d.fixed_schedule) AS fixed,
                   count(*) FILTER (WHERE d.due) AS due_days,
                   count(*) FILTER (WHERE d.completed) AS completed_days,
                   count(*) FILTER (WHERE d.due AND d.completed) AS completed_due_days,
                   count(*) FILTER (WHERE NOT d.skipped) AS open_days
            FROM (%s) d
            JOIN habits h ON h.tenant_id = d.tenant_id AND h.user_id = d.user_id AND h.id = d.habit_id
            WHERE d.date BETWEEN $1 AND $2 %s
            GROUP BY d.tenant_id, d.user_id, d.habit_id, h.name, h.schedule_type, h.schedule_n
        ), rated AS (
            SELECT *, round(CASE WHEN fixed THEN completed_due_days::numeric / nullif(due_days, 0)
                                 ELSE completed_days::numeric / nullif(ceil(open_days * schedule_n / CASE schedule_type WHEN 'frequencyWeekly' THEN 7.0 ELSE 30.0 END), 0)
                            END, 4) AS rate
            FROM per_habit
        )
        SELECT tenant_id, user_id, habit_id, name, schedule_type, due_days, completed_days, rate, coalesce(rate < 0.5, false)
        FROM rated
        $query$,
        CASE WHEN p_user IS NULL THEN 'SELECT * FROM analytics.habit_days' ELSE analytics.user_habit_days_query(p_tenant, p_user) END,
        CASE WHEN p_user IS NULL THEN '' ELSE format('AND h.tenant_id = %L AND h.user_id = %L', p_tenant, p_user) END)
    USING from_date, to_date;
END
$$;
COMMENT ON FUNCTION analytics.user_habit_completion_between(uuid, text, date, date) IS 'habit_completion_rates over the days from_date…to_date for one user (every user when p_user is NULL); the stats API''s /v1/stats/habits. For one user only the range''s days are generated.';

CREATE FUNCTION analytics.user_daily_habit_completion_between(p_tenant uuid, p_user text, from_date date, to_date date)
    RETURNS TABLE (date date, due_habits bigint, completed_habits bigint, completion_rate numeric, day_status text)
    LANGUAGE plpgsql STABLE
    AS $$
BEGIN
    RETURN QUERY EXECUTE format($query$
        SELECT d.date,
               count(*) FILTER (WHERE d.due),
               count(*) FILTER (WHERE d.due AND d.completed),
               round(count(*) FILTER (WHERE d.due AND d.completed)::numeric / nullif(count(*) FILTER (WHERE d.due), 0), 4),
               CASE
                   WHEN count(*) FILTER (WHERE d.due) > 0 THEN CASE WHEN bool_and(d.completed) FILTER (WHERE d.due) THEN 'complete' ELSE 'incomplete' END
                   WHEN bool_or(d.completed) FILTER (WHERE NOT d.fixed_schedule) THEN 'complete'
                   ELSE 'rest'
               END
        FROM (%s) d
        GROUP BY d.date
        $query$, analytics.user_habit_days_query(p_tenant, p_user))
    USING from_date, to_date;
END
$$;
COMMENT ON FUNCTION analytics.user_daily_habit_completion_between(uuid, text, date, date) IS 'analytics.daily_habit_completion of one user for the days from_date…to_date, generating only those days; the stats API''s days.';

CREATE FUNCTION analytics.user_habit_days_in_range(p_tenant uuid, p_user text, from_date date, to_date date) RETURNS bigint
    LANGUAGE plpgsql STABLE
    AS $$
DECLARE
    total bigint;
BEGIN
    EXECUTE format($query$
        SELECT coalesce(sum(greatest(0, least(h.end_date, $2, (now() AT TIME ZONE u.time_zone)::date)
                                        - greatest(h.start_date, $1, (now() AT TIME ZONE u.time_zone)::date - 3660) + 1)), 0)::int8
        FROM habits h JOIN users u ON u.tenant_id = h.tenant_id AND u.user_id = h.user_id
        WHERE h.deleted_at IS NULL AND h.tenant_id = %1$L AND h.user_id = %2$L AND u.tenant_id = %1$L AND u.user_id = %2$L
        $query$, p_tenant, p_user)
    INTO total
    USING from_date, to_date;
    RETURN total;
END
$$;
COMMENT ON FUNCTION analytics.user_habit_days_in_range(uuid, text, date, date) IS 'How many (habit, day) rows the user''s statistics over from_date…to_date compute: live habits times the days of the range each was alive. The stats API refuses a range above its limit.';
