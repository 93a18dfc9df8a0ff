-- public.habitsync_habit_months_after_insert_or_delete()
-- A live habit inserted or removed changes its user's streak summaries (tombstones, purged or new, change nothing).

CREATE OR REPLACE FUNCTION public.habitsync_habit_months_after_insert_or_delete()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
DECLARE
    touched record;
BEGIN
    FOR touched IN SELECT DISTINCT tenant_id, user_id FROM changed WHERE deleted_at IS NULL LOOP
        EXECUTE format('DELETE FROM derived_streak_months WHERE tenant_id = %L AND user_id = %L', touched.tenant_id, touched.user_id);
    END LOOP;
    RETURN NULL;
END
$function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
