-- public.habitsync_forget_streak_month(p_tenant uuid, p_user text, p_month date)
-- Deletes a user's streak summary of one month (derived_streak_months), which the next recompute rebuilds from the days.

CREATE OR REPLACE FUNCTION public.habitsync_forget_streak_month(p_tenant uuid, p_user text, p_month date)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF current_setting('citus.shard_count', true) IS NOT NULL THEN
        EXECUTE format('DELETE FROM %I WHERE tenant_id = %L AND user_id = %L AND month = %L',
                       coalesce(nullif(current_setting('habitsync.streak_months_shard', true), ''), 'derived_streak_months'),
                       p_tenant, p_user, p_month);
    ELSE
        DELETE FROM derived_streak_months WHERE tenant_id = p_tenant AND user_id = p_user AND month = p_month;
    END IF;
END
$function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
