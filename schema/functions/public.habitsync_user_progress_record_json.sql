-- public.habitsync_user_progress_record_json(p user_progress)
-- A user_progress row as its wire record, as JSON text (the same value as habitsync_user_progress_record).

CREATE OR REPLACE FUNCTION public.habitsync_user_progress_record_json(p user_progress)
 RETURNS text
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$
        SELECT concat(
            '{"totalXP":', habitsync_json_integer(p.total_xp),
            ',"currentLevel":', habitsync_json_integer(p.current_level),
            ',"xpForCurrentLevel":', habitsync_json_integer(p.xp_for_current_level),
            ',"xpForNextLevel":', habitsync_json_integer(p.xp_for_next_level), '}')
    $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
