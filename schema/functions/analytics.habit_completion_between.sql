-- analytics.habit_completion_between(from_date date, to_date date)
-- habit_completion_rates over the days from_date…to_date (the stats API's /v1/stats/habits).

CREATE OR REPLACE FUNCTION analytics.habit_completion_between(from_date date, to_date date)
 RETURNS TABLE(tenant_id uuid, user_id text, habit_id uuid, habit_name text, schedule_type text, due_days bigint, completed_days bigint, completion_rate numeric, struggling boolean)
 LANGUAGE plpgsql
 STABLE
AS $function$
BEGIN
    RETURN QUERY SELECT * FROM analytics.user_habit_completion_between(NULL, NULL, from_date, to_date);
END
$function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
