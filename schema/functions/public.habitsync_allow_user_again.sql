-- public.habitsync_allow_user_again(p_tenant uuid, p_user text)
-- Removes an erasure marker (admins only: user allow-again); true when there was one.

CREATE OR REPLACE FUNCTION public.habitsync_allow_user_again(p_tenant uuid, p_user text)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'public', 'pg_catalog'
AS $function$
    DECLARE
        marker bytea := habitsync_erased_user_hash(p_tenant, p_user);
        removed bigint;
    BEGIN
        DELETE FROM erased_users WHERE tenant_id = p_tenant AND user_hash = marker;
        GET DIAGNOSTICS removed = ROW_COUNT;
        RETURN removed > 0;
    END
    $function$

-- Privileges
-- none but the owner's
