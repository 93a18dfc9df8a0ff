-- public.habitsync_user_erased(p_tenant uuid, p_user text)
-- Whether the user's account was erased (and not allowed again), or their whole tenant (a token verified with a key cached before the tenant's erasure). Every push, pull and import checks it.

CREATE OR REPLACE FUNCTION public.habitsync_user_erased(p_tenant uuid, p_user text)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'public', 'pg_catalog'
AS $function$
    BEGIN
        RETURN NOT EXISTS (SELECT 1 FROM tenants t WHERE t.id = p_tenant)
            OR EXISTS (SELECT 1 FROM erasure_keys k
                       JOIN erased_users e ON e.tenant_id = k.tenant_id AND e.user_hash = sha256(k.key || convert_to(p_user, 'UTF8'))
                       WHERE k.tenant_id = p_tenant);
    END
    $function$

-- Privileges
GRANT EXECUTE ON FUNCTION public.habitsync_user_erased(p_tenant uuid, p_user text) TO habitsync_app;
