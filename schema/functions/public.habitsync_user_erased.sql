-- public.habitsync_user_erased(p_tenant uuid, p_user text)
-- Whether the user's account was erased (and not allowed again), or their whole tenant (a token verified with a key cached before the tenant's erasure). Every push, pull and import checks it.

CREATE OR REPLACE FUNCTION public.habitsync_user_erased(p_tenant uuid, p_user text)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'public', 'pg_catalog'
AS $function$
    DECLARE
        marker bytea;
    BEGIN
        IF NOT EXISTS (SELECT 1 FROM tenants t WHERE t.id = p_tenant) THEN
            RETURN true;
        END IF;
        SELECT sha256(k.key || convert_to(p_user, 'UTF8')) INTO marker FROM erasure_keys k WHERE k.tenant_id = p_tenant;
        IF marker IS NULL THEN
            RETURN false;
        END IF;
        RETURN EXISTS (SELECT 1 FROM erased_users e WHERE e.tenant_id = p_tenant AND e.user_hash = marker);
    END
    $function$

-- Privileges
GRANT EXECUTE ON FUNCTION public.habitsync_user_erased(p_tenant uuid, p_user text) TO habitsync_app;
