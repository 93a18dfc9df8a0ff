-- public.habitsync_usage_event_record(e usage_events)
-- A usage_events row as its wire record.

CREATE OR REPLACE FUNCTION public.habitsync_usage_event_record(e usage_events)
 RETURNS jsonb
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$
        SELECT jsonb_build_object(
            'eventType', e.event_type, 'timestamp', habitsync_wire_time(e.occurred_at), 'targetAppName', e.target_app_name,
            'pauseDuration', e.pause_duration, 'timerDuration', e.timer_duration)
    $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
