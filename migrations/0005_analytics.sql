-- Analysts' interface: the "is due" rule in SQL, the analytics schema of documented views,
-- and the habitsync_analyst role (reads every tenant's analytics and data, writes nothing,
-- reads no secrets). Views are security_invoker, so each caller's row-level security
-- applies: the request role sees its own tenant and user, the analyst role everything.

CREATE FUNCTION habitsync_is_due(schedule_type text, schedule_n integer, schedule_weekdays text[], start_date date, end_date date, day date)
    RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
        SELECT day >= start_date AND (end_date IS NULL OR day <= end_date) AND CASE schedule_type
            WHEN 'daily' THEN true
            WHEN 'everyNDays' THEN schedule_n >= 1 AND (day - start_date) % greatest(schedule_n, 1) = 0
            WHEN 'specificWeekdays' THEN (ARRAY['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'])[extract(dow FROM day)::int + 1] = ANY (schedule_weekdays)
            ELSE false  -- frequencyWeekly / frequencyMonthly are never "due": they count where completed
        END
    $$;
COMMENT ON FUNCTION habitsync_is_due(text, integer, text[], date, date, date) IS 'Whether a habit with this schedule and start/end is due on day: the same rule as the server''s Swift HabitDefinition.isDue (tested against each other). Skips and deletion are the caller''s to apply.';

CREATE SCHEMA analytics;
COMMENT ON SCHEMA analytics IS 'Stable, documented views for analysts (docs/analytics.md). Each view is security_invoker: row-level security of the caller applies.';

CREATE VIEW analytics.habit_days WITH (security_invoker = true) AS
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
-- At most ten years back, as the server's derived state (DayClassifier.historyDays).
CROSS JOIN LATERAL generate_series(greatest(h.start_date, (now() AT TIME ZONE u.time_zone)::date - 3660), least(h.end_date, (now() AT TIME ZONE u.time_zone)::date), interval '1 day') AS d(day)
LEFT JOIN daily_progress p ON p.tenant_id = h.tenant_id AND p.user_id = h.user_id AND p.habit_id = h.id AND p.date = d.day::date AND p.deleted_at IS NULL
WHERE h.deleted_at IS NULL;
COMMENT ON VIEW analytics.habit_days IS 'One row per live habit and calendar day from its start (at most ten years back) to its end or the user''s today: whether it was due (fixed schedules, not skipped) and completed.';
COMMENT ON COLUMN analytics.habit_days.tenant_id IS 'Tenant.';
COMMENT ON COLUMN analytics.habit_days.user_id IS 'User.';
COMMENT ON COLUMN analytics.habit_days.habit_id IS 'Habit.';
COMMENT ON COLUMN analytics.habit_days.date IS 'Calendar day in the user''s time zone.';
COMMENT ON COLUMN analytics.habit_days.fixed_schedule IS 'daily, everyNDays or specificWeekdays (frequency habits are never due).';
COMMENT ON COLUMN analytics.habit_days.skipped IS 'The user skipped the day (neutral).';
COMMENT ON COLUMN analytics.habit_days.due IS 'Due that day: fixed schedule names it and it was not skipped.';
COMMENT ON COLUMN analytics.habit_days.completed IS 'Completed: goal met (formation) or ceiling kept (breaking), not skipped.';

CREATE VIEW analytics.daily_habit_completion WITH (security_invoker = true) AS
SELECT tenant_id, user_id, date,
       count(*) FILTER (WHERE due) AS due_habits,
       count(*) FILTER (WHERE due AND completed) AS completed_habits,
       round(count(*) FILTER (WHERE due AND completed)::numeric / nullif(count(*) FILTER (WHERE due), 0), 4) AS completion_rate,
       CASE
           WHEN count(*) FILTER (WHERE due) > 0 THEN CASE WHEN bool_and(completed) FILTER (WHERE due) THEN 'complete' ELSE 'incomplete' END
           WHEN bool_or(completed) FILTER (WHERE NOT fixed_schedule) THEN 'complete'
           ELSE 'rest'
       END AS day_status
FROM analytics.habit_days
GROUP BY tenant_id, user_id, date;
COMMENT ON VIEW analytics.daily_habit_completion IS 'Per user and day (seed 000, queries 1–3): due habits, completed ones, the rate, and the day''s status as the streak rules see it.';
COMMENT ON COLUMN analytics.daily_habit_completion.tenant_id IS 'Tenant.';
COMMENT ON COLUMN analytics.daily_habit_completion.user_id IS 'User.';
COMMENT ON COLUMN analytics.daily_habit_completion.date IS 'Calendar day in the user''s time zone.';
COMMENT ON COLUMN analytics.daily_habit_completion.due_habits IS 'Habits due that day.';
COMMENT ON COLUMN analytics.daily_habit_completion.completed_habits IS 'Due habits completed that day.';
COMMENT ON COLUMN analytics.daily_habit_completion.completion_rate IS 'completed_habits / due_habits (NULL when nothing was due).';
COMMENT ON COLUMN analytics.daily_habit_completion.day_status IS 'complete, incomplete or rest (today shows incomplete until done; the streak does not break on it yet).';

CREATE FUNCTION analytics.habit_completion_between(from_date date, to_date date)
    RETURNS TABLE (tenant_id uuid, user_id text, habit_id uuid, habit_name text, schedule_type text, due_days bigint,
                   completed_days bigint, completion_rate numeric, struggling boolean)
    LANGUAGE sql STABLE
    AS $$
        WITH per_habit AS (
            SELECT d.tenant_id, d.user_id, d.habit_id, h.name, h.schedule_type, h.schedule_n,
                   bool_or(d.fixed_schedule) AS fixed,
                   count(*) FILTER (WHERE d.due) AS due_days,
                   count(*) FILTER (WHERE d.completed) AS completed_days,
                   count(*) FILTER (WHERE d.due AND d.completed) AS completed_due_days,
                   count(*) FILTER (WHERE NOT d.skipped) AS open_days
            FROM analytics.habit_days d
            JOIN habits h ON h.tenant_id = d.tenant_id AND h.user_id = d.user_id AND h.id = d.habit_id
            WHERE d.date BETWEEN from_date AND to_date
            GROUP BY d.tenant_id, d.user_id, d.habit_id, h.name, h.schedule_type, h.schedule_n
        ), rated AS (
            SELECT *, round(CASE WHEN fixed THEN completed_due_days::numeric / nullif(due_days, 0)
                                 ELSE completed_days::numeric / nullif(ceil(open_days * schedule_n / CASE schedule_type WHEN 'frequencyWeekly' THEN 7.0 ELSE 30.0 END), 0)
                            END, 4) AS rate
            FROM per_habit
        )
        SELECT tenant_id, user_id, habit_id, name, schedule_type, due_days, completed_days, rate, coalesce(rate < 0.5, false)
        FROM rated
    $$;
COMMENT ON FUNCTION analytics.habit_completion_between(date, date) IS 'habit_completion_rates over the days from_date…to_date (the stats API''s /v1/stats/habits).';

CREATE VIEW analytics.habit_completion_rates WITH (security_invoker = true) AS
SELECT * FROM analytics.habit_completion_between('-infinity'::date, 'infinity'::date);
COMMENT ON VIEW analytics.habit_completion_rates IS 'Per habit over its whole life to today: completion rate and struggling (rate below 50%). Fixed schedules: completed due days / due days; frequency habits: completed days / the days the frequency asks for (n per 7 or 30 days, skips excluded).';
COMMENT ON COLUMN analytics.habit_completion_rates.tenant_id IS 'Tenant.';
COMMENT ON COLUMN analytics.habit_completion_rates.user_id IS 'User.';
COMMENT ON COLUMN analytics.habit_completion_rates.habit_id IS 'Habit.';
COMMENT ON COLUMN analytics.habit_completion_rates.habit_name IS 'The habit''s name.';
COMMENT ON COLUMN analytics.habit_completion_rates.schedule_type IS 'The habit''s schedule type.';
COMMENT ON COLUMN analytics.habit_completion_rates.due_days IS 'Days it was due (fixed schedules).';
COMMENT ON COLUMN analytics.habit_completion_rates.completed_days IS 'Days it was completed.';
COMMENT ON COLUMN analytics.habit_completion_rates.completion_rate IS 'Share of what was asked that was done (0–1; NULL when nothing was asked yet).';
COMMENT ON COLUMN analytics.habit_completion_rates.struggling IS 'completion_rate below 0.5.';

CREATE VIEW analytics.focus_stats WITH (security_invoker = true) AS
WITH sessions AS (
    SELECT f.tenant_id, f.user_id, f.state, f.duration,
           (coalesce(f.end_time, f.start_time) AT TIME ZONE u.time_zone)::date AS day,
           (now() AT TIME ZONE u.time_zone)::date AS today
    FROM focus_sessions f JOIN users u ON u.tenant_id = f.tenant_id AND u.user_id = f.user_id
    WHERE f.deleted_at IS NULL
),
days AS (
    SELECT DISTINCT tenant_id, user_id, day, today FROM sessions WHERE state = 'completed' AND day <= today
),
islands AS (
    SELECT tenant_id, user_id, today, min(day) AS first_day, max(day) AS last_day, count(*) AS length
    FROM (SELECT *, day - (row_number() OVER (PARTITION BY tenant_id, user_id ORDER BY day))::int AS island FROM days) numbered
    GROUP BY tenant_id, user_id, today, island
),
streaks AS (
    SELECT tenant_id, user_id, max(length) AS longest_streak,
           coalesce(max(length) FILTER (WHERE last_day >= today - 1), 0) AS current_streak
    FROM islands GROUP BY tenant_id, user_id
)
SELECT s.tenant_id, s.user_id,
       count(*) FILTER (WHERE s.state = 'completed') AS total_trees,
       coalesce(sum(s.duration) FILTER (WHERE s.state = 'completed'), 0) AS total_focus_time,
       count(*) FILTER (WHERE s.state IN ('completed', 'abandoned')) AS total_sessions,
       count(*) FILTER (WHERE s.state = 'completed' AND s.day = s.today) AS todays_trees,
       coalesce(sum(s.duration) FILTER (WHERE s.state = 'completed' AND s.day = s.today), 0) AS todays_focus_time,
       coalesce(max(k.current_streak), 0) AS current_streak,
       coalesce(max(k.longest_streak), 0) AS longest_streak,
       count(*) FILTER (WHERE s.state = 'abandoned') AS abandoned_count,
       coalesce(round(count(*) FILTER (WHERE s.state = 'completed')::numeric * 100
                      / nullif(count(*) FILTER (WHERE s.state IN ('completed', 'abandoned')), 0), 4), 0) AS completion_rate
FROM sessions s LEFT JOIN streaks k ON k.tenant_id = s.tenant_id AND k.user_id = s.user_id
GROUP BY s.tenant_id, s.user_id;
COMMENT ON VIEW analytics.focus_stats IS 'ForestStats per user (seed 001, T011), with completion_rate = completed / (completed + abandoned) × 100 (erratum 7).';
COMMENT ON COLUMN analytics.focus_stats.tenant_id IS 'Tenant.';
COMMENT ON COLUMN analytics.focus_stats.user_id IS 'User.';
COMMENT ON COLUMN analytics.focus_stats.total_trees IS 'Completed sessions.';
COMMENT ON COLUMN analytics.focus_stats.total_focus_time IS 'Seconds of focus in completed sessions.';
COMMENT ON COLUMN analytics.focus_stats.total_sessions IS 'Finished sessions: completed + abandoned.';
COMMENT ON COLUMN analytics.focus_stats.todays_trees IS 'Sessions completed today (user''s time zone).';
COMMENT ON COLUMN analytics.focus_stats.todays_focus_time IS 'Seconds of focus completed today.';
COMMENT ON COLUMN analytics.focus_stats.current_streak IS 'Consecutive days with a completed session, ending today or yesterday.';
COMMENT ON COLUMN analytics.focus_stats.longest_streak IS 'Longest such run.';
COMMENT ON COLUMN analytics.focus_stats.abandoned_count IS 'Abandoned sessions.';
COMMENT ON COLUMN analytics.focus_stats.completion_rate IS 'completed / (completed + abandoned) × 100.';

CREATE VIEW analytics.usage_stats WITH (security_invoker = true) AS
SELECT tenant_id, user_id,
       coalesce(sum(pause_duration) FILTER (WHERE event_type = 'exit_to_focus'), 0) / 3600.0 AS hours_reclaimed,
       count(*) FILTER (WHERE event_type = 'exit_to_focus') AS total_conscious_exits,
       coalesce(avg(pause_duration), 0) AS average_pause_time,
       count(*) FILTER (WHERE event_type = 'exit_to_focus')::float8 / nullif(count(*), 0) AS intentionality_score
FROM usage_events
GROUP BY tenant_id, user_id;
COMMENT ON VIEW analytics.usage_stats IS 'Usage statistics per user (seed 002).';
COMMENT ON COLUMN analytics.usage_stats.tenant_id IS 'Tenant.';
COMMENT ON COLUMN analytics.usage_stats.user_id IS 'User.';
COMMENT ON COLUMN analytics.usage_stats.hours_reclaimed IS 'Hours of pause in conscious exits (exit_to_focus).';
COMMENT ON COLUMN analytics.usage_stats.total_conscious_exits IS 'exit_to_focus events.';
COMMENT ON COLUMN analytics.usage_stats.average_pause_time IS 'Mean pause_duration over all events, seconds.';
COMMENT ON COLUMN analytics.usage_stats.intentionality_score IS 'exit_to_focus events / all events.';

CREATE VIEW analytics.usage_daily_trend WITH (security_invoker = true) AS
SELECT u.tenant_id, u.user_id, d.day::date AS date,
       count(e.id) FILTER (WHERE e.event_type = 'exit_to_focus') AS conscious_exits,
       count(e.id) AS events,
       coalesce(sum(e.pause_duration), 0) AS pause_seconds
FROM users u
CROSS JOIN LATERAL generate_series((now() AT TIME ZONE u.time_zone)::date - 29, (now() AT TIME ZONE u.time_zone)::date, interval '1 day') AS d(day)
LEFT JOIN usage_events e ON e.tenant_id = u.tenant_id AND e.user_id = u.user_id AND (e.occurred_at AT TIME ZONE u.time_zone)::date = d.day::date
WHERE EXISTS (SELECT 1 FROM usage_events x WHERE x.tenant_id = u.tenant_id AND x.user_id = u.user_id)
GROUP BY u.tenant_id, u.user_id, d.day;
COMMENT ON VIEW analytics.usage_daily_trend IS 'The last 30 days per user with usage events (seed 002 trend), days without events included.';
COMMENT ON COLUMN analytics.usage_daily_trend.tenant_id IS 'Tenant.';
COMMENT ON COLUMN analytics.usage_daily_trend.user_id IS 'User.';
COMMENT ON COLUMN analytics.usage_daily_trend.date IS 'Calendar day in the user''s time zone.';
COMMENT ON COLUMN analytics.usage_daily_trend.conscious_exits IS 'exit_to_focus events that day.';
COMMENT ON COLUMN analytics.usage_daily_trend.events IS 'All usage events that day.';
COMMENT ON COLUMN analytics.usage_daily_trend.pause_seconds IS 'Sum of pause_duration that day.';

CREATE VIEW analytics.conflicts_per_day WITH (security_invoker = true) AS
SELECT tenant_id, (logged_at AT TIME ZONE 'UTC')::date AS date, collection, outcome, error_code, count(*) AS conflicts
FROM conflict_log
GROUP BY tenant_id, (logged_at AT TIME ZONE 'UTC')::date, collection, outcome, error_code;
COMMENT ON VIEW analytics.conflicts_per_day IS 'Superseded and rejected changes per UTC day, collection and reason.';
COMMENT ON COLUMN analytics.conflicts_per_day.tenant_id IS 'Tenant.';
COMMENT ON COLUMN analytics.conflicts_per_day.date IS 'UTC day logged.';
COMMENT ON COLUMN analytics.conflicts_per_day.collection IS 'Collection as sent.';
COMMENT ON COLUMN analytics.conflicts_per_day.outcome IS 'superseded or rejected.';
COMMENT ON COLUMN analytics.conflicts_per_day.error_code IS 'Rejection code (NULL when superseded).';
COMMENT ON COLUMN analytics.conflicts_per_day.conflicts IS 'How many.';

CREATE VIEW analytics.xp_ledger_check WITH (security_invoker = true) AS
SELECT p.tenant_id, p.user_id, p.total_xp AS stored_total_xp, greatest(0, coalesce(sum(x.amount), 0)) AS ledger_total_xp
FROM user_progress p
LEFT JOIN xp_transactions x ON x.tenant_id = p.tenant_id AND x.user_id = p.user_id
GROUP BY p.tenant_id, p.user_id, p.total_xp
HAVING p.total_xp <> greatest(0, coalesce(sum(x.amount), 0));
COMMENT ON VIEW analytics.xp_ledger_check IS 'Users whose stored total XP differs from max(0, sum of their ledger). Always empty; a row is a bug.';
COMMENT ON COLUMN analytics.xp_ledger_check.tenant_id IS 'Tenant.';
COMMENT ON COLUMN analytics.xp_ledger_check.user_id IS 'User.';
COMMENT ON COLUMN analytics.xp_ledger_check.stored_total_xp IS 'user_progress.total_xp.';
COMMENT ON COLUMN analytics.xp_ledger_check.ledger_total_xp IS 'max(0, sum(xp_transactions.amount)).';

-- The request role computes the stats API from these views.
GRANT USAGE ON SCHEMA analytics TO habitsync_app;
GRANT SELECT ON ALL TABLES IN SCHEMA analytics TO habitsync_app;

-- ---------------------------------------------------------------------------------------
-- habitsync_analyst: no login (admins grant it), reads analytics and data of every tenant,
-- writes nothing, reads no secrets (tenant_keys, push_batches).
-- ---------------------------------------------------------------------------------------
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'habitsync_analyst') THEN
        CREATE ROLE habitsync_analyst NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS;
    END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
    NULL;
END
$$;

GRANT USAGE ON SCHEMA analytics, archive TO habitsync_analyst;
GRANT SELECT ON ALL TABLES IN SCHEMA analytics TO habitsync_analyst;
GRANT SELECT ON tenants, users, devices, habits, reminders, daily_progress, xp_transactions, achievements, focus_sessions,
    selected_apps, user_settings, usage_events, global_streaks, user_progress, usage_streaks, conflict_log, data_migrations,
    legacy_import_archive, habitsync_schema_migrations TO habitsync_analyst;

DO $$
DECLARE
    table_name text;
BEGIN
    FOREACH table_name IN ARRAY ARRAY[
        'tenants', 'users', 'devices', 'habits', 'reminders', 'daily_progress', 'xp_transactions', 'achievements',
        'focus_sessions', 'selected_apps', 'user_settings', 'usage_events', 'global_streaks', 'user_progress',
        'usage_streaks', 'conflict_log', 'data_migrations', 'legacy_import_archive']
    LOOP
        EXECUTE format('CREATE POLICY analyst_read ON %I FOR SELECT TO habitsync_analyst USING (true)', table_name);
    END LOOP;
    -- Partitions, including those already moved to the archive schema, for direct reads.
    FOR table_name IN
        SELECT c.oid::regclass::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relname LIKE 'usage\_events\_%' AND c.relkind = 'r' AND n.nspname IN ('public', 'archive')
    LOOP
        EXECUTE format('CREATE POLICY analyst_read ON %s FOR SELECT TO habitsync_analyst USING (true)', table_name);
        EXECUTE format('GRANT SELECT ON %s TO habitsync_analyst', table_name);
    END LOOP;
END
$$;

-- New monthly partitions get the analyst's read policy and grant too.
CREATE OR REPLACE FUNCTION habitsync_secure_usage_event_partition(partition_name text, description text) RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    parent_column record;
BEGIN
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', partition_name);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', partition_name);
    EXECUTE format('CREATE POLICY tenant_isolation ON %I USING (habitsync_row_visible(tenant_id, user_id)) WITH CHECK (habitsync_row_visible(tenant_id, user_id))', partition_name);
    EXECUTE format('CREATE POLICY analyst_read ON %I FOR SELECT TO habitsync_analyst USING (true)', partition_name);
    EXECUTE format('GRANT SELECT ON %I TO habitsync_analyst', partition_name);
    EXECUTE format('COMMENT ON TABLE %I IS %L', partition_name, description);
    FOR parent_column IN
        SELECT a.attname, col_description('usage_events'::regclass, a.attnum) AS comment
        FROM pg_attribute a
        WHERE a.attrelid = 'usage_events'::regclass AND a.attnum > 0 AND NOT a.attisdropped
    LOOP
        EXECUTE format('COMMENT ON COLUMN %I.%I IS %L', partition_name, parent_column.attname, parent_column.comment);
    END LOOP;
END
$$;
