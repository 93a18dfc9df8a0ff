-- public.habitsync_focus_session_record(f focus_sessions)
-- A focus_sessions row as its wire record.

CREATE OR REPLACE FUNCTION public.habitsync_focus_session_record(f focus_sessions)
 RETURNS jsonb
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$
        SELECT jsonb_build_object(
            'startTime', habitsync_wire_time(f.start_time), 'endTime', habitsync_wire_time(f.end_time), 'state', f.state,
            'duration', f.duration, 'pausedDuration', f.paused_duration, 'createdAt', habitsync_wire_time(f.created_at))
    $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
