-- public.habitsync_habit_record(h habits)
-- A habits row as its wire record.

CREATE OR REPLACE FUNCTION public.habitsync_habit_record(h habits)
 RETURNS jsonb
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$
        SELECT jsonb_build_object(
            'name', h.name, 'habitDescription', h.habit_description, 'icon', h.icon, 'color', h.color,
            'habitType', h.habit_type, 'goalCount', h.goal_count, 'goalUnit', h.goal_unit,
            'schedule', jsonb_strip_nulls(jsonb_build_object('type', h.schedule_type, 'n', h.schedule_n, 'weekdays', to_jsonb(h.schedule_weekdays))),
            'baselineCount', h.baseline_count, 'baselineUnit', h.baseline_unit,
            'startDate', habitsync_wire_date(h.start_date), 'endDate', habitsync_wire_date(h.end_date),
            'createdAt', habitsync_wire_time(h.created_at), 'sortOrder', h.sort_order)
    $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
