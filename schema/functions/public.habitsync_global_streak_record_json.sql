-- public.habitsync_global_streak_record_json(g global_streaks)
-- A global_streaks row as its wire record, as JSON text (the same value as habitsync_global_streak_record).

CREATE OR REPLACE FUNCTION public.habitsync_global_streak_record_json(g global_streaks)
 RETURNS text
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$
        SELECT concat(
            '{"currentStreak":', habitsync_json_integer(g.current_streak),
            ',"longestStreak":', habitsync_json_integer(g.longest_streak),
            ',"totalCompleteDays":', habitsync_json_integer(g.total_complete_days),
            ',"lastCompleteDate":', habitsync_json_date(g.last_complete_date),
            ',"computedFor":', habitsync_json_date(g.computed_for), '}')
    $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
