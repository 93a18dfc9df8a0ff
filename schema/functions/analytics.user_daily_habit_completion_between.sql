-- analytics.user_daily_habit_completion_between(p_tenant uuid, p_user text, from_date date, to_date date)
-- analytics.daily_habit_completion of one user for the days from_date…to_date, generating only those days; the stats API's days.

CREATE OR REPLACE FUNCTION analytics.user_daily_habit_completion_between(p_tenant uuid, p_user text, from_date date, to_date date)
 RETURNS TABLE(date date, due_habits bigint, completed_habits bigint, completion_rate numeric, day_status text)
 LANGUAGE plpgsql
 STABLE
 SET enable_sort TO 'off'
AS $function$
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
$function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
