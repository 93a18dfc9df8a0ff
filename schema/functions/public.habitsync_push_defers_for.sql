-- public.habitsync_push_defers_for(p_tenant uuid, p_user text)
-- Whether this transaction is a push (habitsync.defer_digests) by the given user, whose writes of the users row the push folds into its closing statement.

CREATE OR REPLACE FUNCTION public.habitsync_push_defers_for(p_tenant uuid, p_user text)
 RETURNS boolean
 LANGUAGE sql
 STABLE
AS $function$
        SELECT current_setting('habitsync.defer_digests', true) = 'on'
           AND p_tenant::text = current_setting('habitsync.tenant_id', true) AND p_user = current_setting('habitsync.user_id', true)
    $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
