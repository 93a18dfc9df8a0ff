-- public.habitsync_user_progress_record(p user_progress)
-- A user_progress row as its wire record.

CREATE OR REPLACE FUNCTION public.habitsync_user_progress_record(p user_progress)
 RETURNS jsonb
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$
        SELECT jsonb_build_object(
            'totalXP', p.total_xp, 'currentLevel', p.current_level, 'xpForCurrentLevel', p.xp_for_current_level,
            'xpForNextLevel', p.xp_for_next_level)
    $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
