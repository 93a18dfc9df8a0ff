-- public.habitsync_achievement_record_json(a achievements)
-- An achievements row as its wire record, as JSON text (the same value as habitsync_achievement_record).

CREATE OR REPLACE FUNCTION public.habitsync_achievement_record_json(a achievements)
 RETURNS text
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$
        SELECT concat(
            '{"achievementId":', habitsync_json_text(a.achievement_id),
            ',"title":', habitsync_json_text(a.title),
            ',"description":', habitsync_json_text(a.description),
            ',"unlockedAt":', habitsync_json_time(a.unlocked_at),
            ',"xpAwarded":', habitsync_json_integer(a.xp_awarded), '}')
    $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
