-- public.habitsync_habit_record_json(h habits)
-- A habits row as its wire record, as JSON text (the same value as habitsync_habit_record).

CREATE OR REPLACE FUNCTION public.habitsync_habit_record_json(h habits)
 RETURNS text
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$
        SELECT concat(
            '{"name":', habitsync_json_text(h.name),
            ',"habitDescription":', habitsync_json_text(h.habit_description),
            ',"icon":', habitsync_json_text(h.icon),
            ',"color":', habitsync_json_text(h.color),
            ',"habitType":', habitsync_json_text(h.habit_type),
            ',"goalCount":', habitsync_json_integer(h.goal_count),
            ',"goalUnit":', habitsync_json_text(h.goal_unit),
            ',"schedule":', '{"type":', habitsync_json_text(h.schedule_type), ',"n":' || h.schedule_n::text, ',"weekdays":' || to_json(h.schedule_weekdays)::text, '}',
            ',"baselineCount":', habitsync_json_integer(h.baseline_count),
            ',"baselineUnit":', habitsync_json_text(h.baseline_unit),
            ',"startDate":', habitsync_json_date(h.start_date),
            ',"endDate":', habitsync_json_date(h.end_date),
            ',"createdAt":', habitsync_json_time(h.created_at),
            ',"sortOrder":', habitsync_json_integer(h.sort_order), '}')
    $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
