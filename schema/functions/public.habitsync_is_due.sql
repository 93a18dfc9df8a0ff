-- public.habitsync_is_due(schedule_type text, schedule_n integer, schedule_weekdays text[], start_date date, end_date date, day date)
-- Whether a habit with this schedule and start/end is due on day: the same rule as the server's Swift HabitDefinition.isDue (tested against each other). Skips and deletion are the caller's to apply.

CREATE OR REPLACE FUNCTION public.habitsync_is_due(schedule_type text, schedule_n integer, schedule_weekdays text[], start_date date, end_date date, day date)
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$
        SELECT day >= start_date AND (end_date IS NULL OR day <= end_date) AND CASE schedule_type
            WHEN 'daily' THEN true
            WHEN 'everyNDays' THEN schedule_n >= 1 AND (day - start_date) % greatest(schedule_n, 1) = 0
            WHEN 'specificWeekdays' THEN (ARRAY['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'])[extract(dow FROM day)::int + 1] = ANY (schedule_weekdays)
            ELSE false  -- frequencyWeekly / frequencyMonthly are never "due": they count where completed
        END
    $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
