-- public.habitsync_usage_streak_record(s usage_streaks)
-- A usage_streaks row as its wire record.

CREATE OR REPLACE FUNCTION public.habitsync_usage_streak_record(s usage_streaks)
 RETURNS jsonb
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$
        SELECT jsonb_build_object(
            'startDate', habitsync_wire_date(s.start_date), 'currentDayCount', s.current_day_count,
            'lastActivityDate', habitsync_wire_date(s.last_activity_date), 'computedFor', habitsync_wire_date(s.computed_for))
    $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
