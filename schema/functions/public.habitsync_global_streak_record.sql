-- public.habitsync_global_streak_record(g global_streaks)
-- A global_streaks row as its wire record.

CREATE OR REPLACE FUNCTION public.habitsync_global_streak_record(g global_streaks)
 RETURNS jsonb
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$
        SELECT jsonb_build_object(
            'currentStreak', g.current_streak, 'longestStreak', g.longest_streak, 'totalCompleteDays', g.total_complete_days,
            'lastCompleteDate', habitsync_wire_date(g.last_complete_date), 'computedFor', habitsync_wire_date(g.computed_for))
    $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
