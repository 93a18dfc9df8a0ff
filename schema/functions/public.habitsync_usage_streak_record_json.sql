-- public.habitsync_usage_streak_record_json(s usage_streaks)
-- A usage_streaks row as its wire record, as JSON text (the same value as habitsync_usage_streak_record).

CREATE OR REPLACE FUNCTION public.habitsync_usage_streak_record_json(s usage_streaks)
 RETURNS text
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$
        SELECT concat(
            '{"startDate":', habitsync_json_date(s.start_date),
            ',"currentDayCount":', habitsync_json_integer(s.current_day_count),
            ',"lastActivityDate":', habitsync_json_date(s.last_activity_date),
            ',"computedFor":', habitsync_json_date(s.computed_for), '}')
    $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
