-- public.habitsync_allow_user_again(p_tenant uuid, p_user text)
-- Removes an erasure marker (admins only: user allow-again) and makes the account's row, restarted, in a new account epoch; true when there was a marker. Refuses while the erasure has not finished.

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
        IF EXISTS (SELECT 1 FROM erased_users WHERE tenant_id = p_tenant AND user_hash = marker)
           AND EXISTS (SELECT 1 FROM users WHERE tenant_id = p_tenant AND user_id = p_user) THEN
            RAISE EXCEPTION 'the erasure of this user has not finished; run user erase again, then allow-again'
                USING ERRCODE = 'object_not_in_prerequisite_state';
        END IF;
        DELETE FROM erased_users WHERE tenant_id = p_tenant AND user_hash = marker;
        GET DIAGNOSTICS removed = ROW_COUNT;
        IF removed > 0 THEN
            INSERT INTO users (tenant_id, user_id, account_restarted) VALUES (p_tenant, p_user, true);
        END IF;
        RETURN removed > 0;
    END
    $function$

-- Privileges
-- none but the owner's
