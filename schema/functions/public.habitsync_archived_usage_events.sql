-- public.habitsync_archived_usage_events(p_tenant uuid, p_user text, p_partition regclass, p_after bigint, p_limit integer)
-- The caller's usage events in one archived partition, after a server_version, for the account export; only within the request scope.

CREATE OR REPLACE FUNCTION public.habitsync_archived_usage_events(p_tenant uuid, p_user text, p_partition regclass, p_after bigint, p_limit integer)
 RETURNS SETOF usage_events
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_catalog'
AS $function$
    BEGIN
        IF p_user IS NULL OR p_tenant IS DISTINCT FROM habitsync_current_tenant_id() OR p_user IS DISTINCT FROM habitsync_current_user_id() THEN
            RAISE EXCEPTION 'archived events outside the request scope' USING ERRCODE = 'insufficient_privilege';
        END IF;
        IF NOT EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                       WHERE c.oid = p_partition AND n.nspname = 'archive' AND c.relname LIKE 'usage\_events\_%' AND c.relkind = 'r') THEN
            RAISE EXCEPTION 'not an archived usage-event partition' USING ERRCODE = 'insufficient_privilege';
        END IF;
        RETURN QUERY EXECUTE format(
            'SELECT (ROW(a.*)::usage_events).* FROM %s a WHERE a.tenant_id = $1 AND a.user_id = $2 AND a.server_version > $3 ORDER BY a.server_version LIMIT $4',
            p_partition) USING p_tenant, p_user, p_after, p_limit;
    END
    $function$

-- Privileges
GRANT EXECUTE ON FUNCTION public.habitsync_archived_usage_events(p_tenant uuid, p_user text, p_partition regclass, p_after bigint, p_limit integer) TO habitsync_app;
