-- public.habitsync_achievement_record(a achievements)
-- An achievements row as its wire record.

CREATE OR REPLACE FUNCTION public.habitsync_achievement_record(a achievements)
 RETURNS jsonb
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$
        SELECT jsonb_build_object(
            'achievementId', a.achievement_id, 'title', a.title, 'description', a.description,
            'unlockedAt', habitsync_wire_time(a.unlocked_at), 'xpAwarded', a.xp_awarded)
    $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
