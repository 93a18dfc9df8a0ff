-- public.habitsync_progress_months_after_insert_or_delete()
-- A live daily_progress row inserted or removed changes its month's streak summary (tombstones, purged or new, change nothing).

CREATE OR REPLACE FUNCTION public.habitsync_progress_months_after_insert_or_delete()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
DECLARE
    touched record;
    on_citus boolean := current_setting('citus.shard_count', true) IS NOT NULL;
BEGIN
    FOR touched IN SELECT DISTINCT tenant_id, user_id, date_trunc('month', date)::date AS month FROM changed WHERE deleted_at IS NULL LOOP
        IF on_citus THEN
            EXECUTE format('DELETE FROM derived_streak_months WHERE tenant_id = %L AND user_id = %L AND month = %L',
                           touched.tenant_id, touched.user_id, touched.month);
        ELSE
            DELETE FROM derived_streak_months WHERE tenant_id = touched.tenant_id AND user_id = touched.user_id AND month = touched.month;
        END IF;
    END LOOP;
    RETURN NULL;
END
$function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
