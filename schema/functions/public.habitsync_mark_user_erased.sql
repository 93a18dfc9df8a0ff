-- public.habitsync_mark_user_erased(p_tenant uuid, p_user text)
-- Remembers that a user is erased (committed before the rows are deleted, so a push racing the erasure either ends before the deletion or is refused).

CREATE OR REPLACE FUNCTION public.habitsync_mark_user_erased(p_tenant uuid, p_user text)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'public', 'pg_catalog'
AS $function$
    BEGIN
        PERFORM habitsync_assert_erasure_scope(p_tenant, p_user);
        IF NOT EXISTS (SELECT 1 FROM erasure_keys WHERE tenant_id = p_tenant) THEN
            -- A tenant created by an older binary after this migration; as before.
            INSERT INTO erasure_keys (tenant_id) VALUES (p_tenant) ON CONFLICT (tenant_id) DO NOTHING;
        END IF;
        -- A plain INSERT, not ON CONFLICT: Citus locks a reference table exclusively for an
        -- upsert, which it allows only to roles that may also update or delete its rows.
        IF NOT EXISTS (SELECT 1 FROM erased_users WHERE tenant_id = p_tenant AND user_hash = habitsync_erased_user_hash(p_tenant, p_user)) THEN
            BEGIN
                INSERT INTO erased_users (tenant_id, user_hash) VALUES (p_tenant, habitsync_erased_user_hash(p_tenant, p_user));
            EXCEPTION WHEN unique_violation THEN
                NULL;  -- the same erasure, requested twice at once
            END;
        END IF;
    END
    $function$

-- Privileges
GRANT EXECUTE ON FUNCTION public.habitsync_mark_user_erased(p_tenant uuid, p_user text) TO habitsync_app;
