-- Issue 46: the erasure check, asked twice by every push and pull, as one planned statement.
--
-- habitsync_user_erased (0013) compared the marker with habitsync_erased_user_hash(), a
-- SECURITY DEFINER SQL function, which PostgreSQL can neither inline (SET search_path) nor keep
-- a plan of between calls: every check parsed and planned its body again, a tenth of
-- PostgreSQL's CPU in an app-open check-in. The same check is now one PL/pgSQL statement, whose
-- plan the session keeps. Same answer: a tenant that is gone, or a marker matching
-- sha256(key || user id); a tenant without an erasure key has erased nobody. VOLATILE as
-- before: each call reads with a fresh snapshot, so a request that waited for the user's lock
-- sees a marker committed meanwhile.
CREATE OR REPLACE FUNCTION habitsync_user_erased(p_tenant uuid, p_user text) RETURNS boolean
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_catalog
    AS $$
    BEGIN
        RETURN NOT EXISTS (SELECT 1 FROM tenants t WHERE t.id = p_tenant)
            OR EXISTS (SELECT 1 FROM erasure_keys k
                       JOIN erased_users e ON e.tenant_id = k.tenant_id AND e.user_hash = sha256(k.key || convert_to(p_user, 'UTF8'))
                       WHERE k.tenant_id = p_tenant);
    END
    $$;
