-- Issue 46: the erasure check, asked twice by every push and pull, without a SQL function.
--
-- habitsync_user_erased (0013) compared the marker with habitsync_erased_user_hash(), a
-- SECURITY DEFINER SQL function, which PostgreSQL can neither inline (SET search_path) nor keep
-- a plan of between calls: every check parsed and planned its body again, a tenth of
-- PostgreSQL's CPU in an app-open check-in. The same checks now run as PL/pgSQL statements,
-- whose plans the session keeps. Same answer: a tenant that is gone, or a marker matching
-- sha256(key || user id); a tenant without an erasure key has erased nobody. VOLATILE as
-- before: each statement reads with a fresh snapshot, so a request that waited for the user's
-- lock sees a marker committed meanwhile.
CREATE OR REPLACE FUNCTION habitsync_user_erased(p_tenant uuid, p_user text) RETURNS boolean
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_catalog
    AS $$
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
    $$;
