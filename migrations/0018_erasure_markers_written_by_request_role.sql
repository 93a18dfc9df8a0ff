-- An erasure's marker is written with the request role's own privilege, and every tenant has
-- its erasure key from the start.
--
-- habitsync_mark_user_erased (0013) wrote erasure_keys and erased_users as the tables' owner
-- (SECURITY DEFINER). On Citus both are reference tables, written on every node, and the
-- request's `SET LOCAL ROLE habitsync_app` goes to the workers with the request scope: there
-- the owner's function writes as habitsync_app, which could not ("permission denied for
-- table erasure_keys"). Now:
--
-- * every tenant gets its key when it is created (TenantStore) and the existing ones here, so
--   the function only reads erasure_keys, which the request role still cannot;
-- * the request role may write erased_users (Citus reads the table for the insert's conflict
--   check as that role, so SELECT too): under the forced policy only for the tenant of its
--   scope, and a marker is a hash it cannot compute, nor link to a user, without the key.
-- * erased_users no longer has a foreign key to tenants: on Citus a write to a table with a
--   foreign key to a reference table locks that table's shard, which takes a write privilege on
--   tenants the request role must not have. `tenant erase` deletes a tenant's markers itself
--   (habitsync_erase), as before.
INSERT INTO erasure_keys (tenant_id) SELECT id FROM tenants ON CONFLICT (tenant_id) DO NOTHING;

-- Nothing relies on it: markers are read by (tenant_id, user_hash) and deleted with their tenant
-- by habitsync_erase.
-- squawk-ignore ban-drop-constraint
ALTER TABLE erased_users DROP CONSTRAINT erased_users_tenant_id_fkey;

GRANT SELECT, INSERT ON erased_users TO habitsync_app;

CREATE OR REPLACE FUNCTION habitsync_mark_user_erased(p_tenant uuid, p_user text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_catalog
    AS $$
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
    $$;
