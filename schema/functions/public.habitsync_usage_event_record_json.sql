-- public.habitsync_usage_event_record_json(e usage_events)
-- A usage_events row as its wire record, as JSON text (the same value as habitsync_usage_event_record).

CREATE OR REPLACE FUNCTION public.habitsync_usage_event_record_json(e usage_events)
 RETURNS text
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$
        SELECT concat(
            '{"eventType":', habitsync_json_text(e.event_type),
            ',"timestamp":', habitsync_json_time(e.occurred_at),
            ',"targetAppName":', habitsync_json_text(e.target_app_name),
            ',"pauseDuration":', habitsync_json_number(e.pause_duration),
            ',"timerDuration":', habitsync_json_number(e.timer_duration), '}')
    $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
