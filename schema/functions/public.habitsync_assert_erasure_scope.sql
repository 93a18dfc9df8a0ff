-- public.habitsync_assert_erasure_scope(p_tenant uuid, p_user text)
-- Refuses an erasure the transaction's request scope does not cover.

CREATE OR REPLACE FUNCTION public.habitsync_assert_erasure_scope(p_tenant uuid, p_user text)
 RETURNS void
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_catalog'
AS $function$
    BEGIN
        IF p_tenant IS DISTINCT FROM habitsync_current_tenant_id()
           OR (p_user IS NULL AND (habitsync_current_user_id() IS NOT NULL OR current_setting('habitsync.scope', true) IS DISTINCT FROM 'tenant'))
           OR (p_user IS NOT NULL AND p_user IS DISTINCT FROM habitsync_current_user_id() AND current_setting('habitsync.scope', true) IS DISTINCT FROM 'tenant') THEN
            RAISE EXCEPTION 'erasure outside the request scope' USING ERRCODE = 'insufficient_privilege';
        END IF;
    END
    $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
