-- public.habitsync_reminder_record(r reminders)
-- A reminders row as its wire record.

CREATE OR REPLACE FUNCTION public.habitsync_reminder_record(r reminders)
 RETURNS jsonb
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$
        SELECT jsonb_build_object(
            'habitId', r.habit_id, 'time', to_char(r.time_of_day, 'HH24:MI'), 'isActive', r.is_active,
            'notificationIdentifier', r.notification_identifier)
    $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
