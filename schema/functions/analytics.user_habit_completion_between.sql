-- analytics.user_habit_completion_between(p_tenant uuid, p_user text, from_date date, to_date date)
-- habit_completion_rates over the days from_date…to_date for one user (every user when p_user is NULL); the stats API's /v1/stats/habits. For one user only the range's days are generated and read (migration 0038).

CREATE OR REPLACE FUNCTION analytics.user_habit_completion_between(p_tenant uuid, p_user text, from_date date, to_date date)
 RETURNS TABLE(tenant_id uuid, user_id text, habit_id uuid, habit_name text, schedule_type text, due_days bigint, completed_days bigint, completion_rate numeric, struggling boolean)
 LANGUAGE plpgsql
 STABLE
 SET enable_sort TO 'off'
AS $function$
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
$function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
