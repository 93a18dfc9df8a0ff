-- public.habitsync_daily_progress_record(p daily_progress)
-- A daily_progress row as its wire record.

CREATE OR REPLACE FUNCTION public.habitsync_daily_progress_record(p daily_progress)
 RETURNS jsonb
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$
        SELECT jsonb_build_object(
            'habitId', p.habit_id, 'date', habitsync_wire_date(p.date), 'progressCount', p.progress_count,
            'goalCount', p.goal_count,
            'timestamps', coalesce((SELECT jsonb_agg(habitsync_wire_time(t) ORDER BY o) FROM unnest(p.timestamps) WITH ORDINALITY AS u(t, o)), '[]'::jsonb),
            'difficulty', p.difficulty, 'skipReason', p.skip_reason, 'skipNote', p.skip_note)
    $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
