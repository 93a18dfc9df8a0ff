-- public.habitsync_focus_session_record_json(f focus_sessions)
-- A focus_sessions row as its wire record, as JSON text (the same value as habitsync_focus_session_record).

CREATE OR REPLACE FUNCTION public.habitsync_focus_session_record_json(f focus_sessions)
 RETURNS text
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$
        SELECT concat(
            '{"startTime":', habitsync_json_time(f.start_time),
            ',"endTime":', habitsync_json_time(f.end_time),
            ',"state":', habitsync_json_text(f.state),
            ',"duration":', habitsync_json_number(f.duration),
            ',"pausedDuration":', habitsync_json_number(f.paused_duration),
            ',"createdAt":', habitsync_json_time(f.created_at), '}')
    $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
