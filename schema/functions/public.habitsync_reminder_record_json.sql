-- public.habitsync_reminder_record_json(r reminders)
-- A reminders row as its wire record, as JSON text (the same value as habitsync_reminder_record).

CREATE OR REPLACE FUNCTION public.habitsync_reminder_record_json(r reminders)
 RETURNS text
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$
        SELECT concat(
            '{"habitId":', habitsync_json_uuid(r.habit_id),
            ',"time":', habitsync_json_text(to_char(r.time_of_day, 'HH24:MI')),
            ',"isActive":', habitsync_json_bool(r.is_active),
            ',"notificationIdentifier":', habitsync_json_text(r.notification_identifier), '}')
    $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
