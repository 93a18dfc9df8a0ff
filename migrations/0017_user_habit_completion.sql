-- The stats API's habit completion for one user (GET /v1/stats/habits), as PL/pgSQL.
--
-- The API read analytics.habit_completion_between(from, to) filtered by tenant and user; on
-- Citus a parameterised query over a SQL function that reads distributed tables cannot be
-- planned at all ("parameterized queries for SQL functions referencing distributed tables are
-- not supported"). This function runs the same query for one user, the user filter inside,
-- so on Citus it goes to the user's shard.
--
-- For the same reason the analysts' view analytics.habit_completion_rates now holds the query
-- itself rather than calling the SQL function (on Citus it failed even from psql), and the
-- two-argument function, which analysts may call with their own dates, becomes PL/pgSQL. Same
-- columns, same rows.
-- These objects live on the coordinator only (the analysts' and the API's queries are planned
-- there): Citus is told not to send this DDL to the workers, where it refuses to replace a
-- view it never distributed. Without Citus the setting is an unused placeholder.
SET LOCAL citus.enable_ddl_propagation TO off;

CREATE FUNCTION analytics.user_habit_completion_between(p_tenant uuid, p_user text, from_date date, to_date date)
    RETURNS TABLE (tenant_id uuid, user_id text, habit_id uuid, habit_name text, schedule_type text, due_days bigint,
                   completed_days bigint, completion_rate numeric, struggling boolean)
    LANGUAGE plpgsql STABLE
    AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
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
              AND d.tenant_id = p_tenant AND d.user_id = p_user AND h.tenant_id = p_tenant AND h.user_id = p_user
            GROUP BY d.tenant_id, d.user_id, d.habit_id, h.name, h.schedule_type, h.schedule_n
        ), rated AS (
            SELECT *, round(CASE WHEN fixed THEN completed_due_days::numeric / nullif(due_days, 0)
                                 ELSE completed_days::numeric / nullif(ceil(open_days * schedule_n / CASE schedule_type WHEN 'frequencyWeekly' THEN 7.0 ELSE 30.0 END), 0)
                            END, 4) AS rate
            FROM per_habit
        )
        SELECT r.tenant_id, r.user_id, r.habit_id, r.name, r.schedule_type, r.due_days, r.completed_days, r.rate, coalesce(r.rate < 0.5, false)
        FROM rated r;
END
$$;
COMMENT ON FUNCTION analytics.user_habit_completion_between(uuid, text, date, date) IS 'analytics.habit_completion_between for one user (the stats API''s /v1/stats/habits); PL/pgSQL so that Citus can plan it.';
GRANT EXECUTE ON FUNCTION analytics.user_habit_completion_between(uuid, text, date, date) TO habitsync_app;

CREATE OR REPLACE FUNCTION analytics.habit_completion_between(from_date date, to_date date)
    RETURNS TABLE (tenant_id uuid, user_id text, habit_id uuid, habit_name text, schedule_type text, due_days bigint,
                   completed_days bigint, completion_rate numeric, struggling boolean)
    LANGUAGE plpgsql STABLE
    AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
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
        SELECT r.tenant_id, r.user_id, r.habit_id, r.name, r.schedule_type, r.due_days, r.completed_days, r.rate, coalesce(r.rate < 0.5, false)
        FROM rated r;
END
$$;

CREATE OR REPLACE VIEW analytics.habit_completion_rates WITH (security_invoker = true) AS
        WITH per_habit AS (
            SELECT d.tenant_id, d.user_id, d.habit_id, h.name, h.schedule_type, h.schedule_n,
                   bool_or(d.fixed_schedule) AS fixed,
                   count(*) FILTER (WHERE d.due) AS due_days,
                   count(*) FILTER (WHERE d.completed) AS completed_days,
                   count(*) FILTER (WHERE d.due AND d.completed) AS completed_due_days,
                   count(*) FILTER (WHERE NOT d.skipped) AS open_days
            FROM analytics.habit_days d
            JOIN habits h ON h.tenant_id = d.tenant_id AND h.user_id = d.user_id AND h.id = d.habit_id
            GROUP BY d.tenant_id, d.user_id, d.habit_id, h.name, h.schedule_type, h.schedule_n
        ), rated AS (
            SELECT *, round(CASE WHEN fixed THEN completed_due_days::numeric / nullif(due_days, 0)
                                 ELSE completed_days::numeric / nullif(ceil(open_days * schedule_n / CASE schedule_type WHEN 'frequencyWeekly' THEN 7.0 ELSE 30.0 END), 0)
                            END, 4) AS rate
            FROM per_habit
        )
        SELECT r.tenant_id, r.user_id, r.habit_id, r.name AS habit_name, r.schedule_type, r.due_days, r.completed_days, r.rate AS completion_rate,
               coalesce(r.rate < 0.5, false) AS struggling
        FROM rated r;
