-- public.habitsync_progress_months_after_insert_or_delete()
-- A live daily_progress row inserted or removed changes its month's streak summary (tombstones, purged or new, change nothing).

CREATE OR REPLACE FUNCTION public.habitsync_progress_months_after_insert_or_delete()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
DECLARE
    touched record;
BEGIN
    FOR touched IN SELECT DISTINCT tenant_id, user_id, date_trunc('month', date)::date AS month FROM changed WHERE deleted_at IS NULL LOOP
        PERFORM habitsync_forget_streak_month(touched.tenant_id, touched.user_id, touched.month);
    END LOOP;
    RETURN NULL;
END
$function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
