-- public.habitsync_xp_ledger_move(p_tenant uuid, p_user text, p_delta bigint)
-- Adds p_delta to users.xp_ledger_sum; inside a push (habitsync.defer_digests) to habitsync.pending_xp_ledger, which the push adds in when it closes.

CREATE OR REPLACE FUNCTION public.habitsync_xp_ledger_move(p_tenant uuid, p_user text, p_delta bigint)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF p_delta IS NULL OR p_delta = 0 THEN RETURN; END IF;
    IF habitsync_push_defers_for(p_tenant, p_user) THEN
        PERFORM set_config('habitsync.pending_xp_ledger',
                           (coalesce(nullif(current_setting('habitsync.pending_xp_ledger', true), '')::bigint, 0) + p_delta)::text, true);
        RETURN;
    END IF;
    EXECUTE format('UPDATE users SET xp_ledger_sum = xp_ledger_sum + %s WHERE tenant_id = %L AND user_id = %L', p_delta, p_tenant, p_user);
END
$function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
