-- public.habitsync_daily_progress_record_json(p daily_progress, timestamps_json text)
-- A daily_progress row as its wire record, as JSON text (the same value as habitsync_daily_progress_record), given its timestamps already rendered as comma-separated JSON strings.

CREATE OR REPLACE FUNCTION public.habitsync_daily_progress_record_json(p daily_progress, timestamps_json text)
 RETURNS text
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$
        SELECT concat(
            '{"habitId":', habitsync_json_uuid(p.habit_id),
            ',"date":', habitsync_json_date(p.date),
            ',"progressCount":', habitsync_json_integer(p.progress_count),
            ',"goalCount":', habitsync_json_integer(p.goal_count),
            ',"timestamps":[', timestamps_json, ']',
            ',"difficulty":', habitsync_json_integer(p.difficulty),
            ',"skipReason":', habitsync_json_text(p.skip_reason),
            ',"skipNote":', habitsync_json_text(p.skip_note), '}')
    $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
