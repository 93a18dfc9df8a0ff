-- Account erasure (docs/accounts.md): a user's rows can be erased from every table, and the
-- erasure is remembered without keeping the user id, so an offline device cannot push the data
-- back.
--
-- * erasure_keys: one random 32-byte key per tenant. Only the tables' owner reads it (through
--   the SECURITY DEFINER functions below); neither the request role nor analysts can.
-- * erased_users: a marker per erased user holding sha256(key || user id) only. Without the
--   key a marker cannot be linked to a user id by guessing ids; erasing the tenant drops its key.
-- * habitsync_erase(tenant, user, dry_run): deletes (or counts) the user's rows, or a whole
--   tenant's, in every table of every schema that has tenant_id and user_id columns, found from
--   the catalog when it runs, so a table added later is covered without editing it.

CREATE TABLE erasure_keys (
    tenant_id  uuid PRIMARY KEY REFERENCES tenants (id) ON DELETE CASCADE,
    key        bytea NOT NULL CHECK (octet_length(key) = 32)
        -- gen_random_uuid() draws from the server's strong random source; 2 × 122 random bits.
        DEFAULT uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()),
    created_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE erasure_keys IS 'The secret key per tenant that erased_users markers are hashed with. Readable by the tables'' owner only.';
COMMENT ON COLUMN erasure_keys.tenant_id IS 'Owning tenant.';
COMMENT ON COLUMN erasure_keys.key IS '32 random bytes.';
COMMENT ON COLUMN erasure_keys.created_at IS 'When the key was made (at the tenant''s first erasure).';

CREATE TABLE erased_users (
    tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    user_hash bytea NOT NULL CHECK (octet_length(user_hash) = 32),
    erased_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, user_hash)
);
COMMENT ON TABLE erased_users IS 'Users whose accounts were erased: their pushes and pulls answer 410 account_erased. No user id: user_hash is sha256(erasure key of the tenant || user id). An admin removes a marker (user allow-again) to let the user start over.';
COMMENT ON COLUMN erased_users.tenant_id IS 'Owning tenant.';
COMMENT ON COLUMN erased_users.user_hash IS 'sha256(erasure_keys.key || convert_to(user_id, ''UTF8'')).';
COMMENT ON COLUMN erased_users.erased_at IS 'When the erasure began.';

-- Neither table is granted to the request role or analysts: only the functions below read
-- them, as the tables' owner, and even then (as every per-tenant table) only the tenant of the
-- transaction's request scope.
ALTER TABLE erasure_keys ENABLE ROW LEVEL SECURITY;
ALTER TABLE erasure_keys FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON erasure_keys USING (tenant_id = habitsync_current_tenant_id()) WITH CHECK (tenant_id = habitsync_current_tenant_id());
ALTER TABLE erased_users ENABLE ROW LEVEL SECURITY;
ALTER TABLE erased_users FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON erased_users USING (tenant_id = habitsync_current_tenant_id()) WITH CHECK (tenant_id = habitsync_current_tenant_id());

CREATE FUNCTION habitsync_erased_user_hash(p_tenant uuid, p_user text) RETURNS bytea
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_catalog
    AS $$ SELECT sha256(k.key || convert_to(p_user, 'UTF8')) FROM erasure_keys k WHERE k.tenant_id = p_tenant $$;
COMMENT ON FUNCTION habitsync_erased_user_hash(uuid, text) IS 'The marker hash of a user; NULL while the tenant has no erasure key (nobody was erased).';
REVOKE ALL ON FUNCTION habitsync_erased_user_hash(uuid, text) FROM PUBLIC;

CREATE FUNCTION habitsync_user_erased(p_tenant uuid, p_user text) RETURNS boolean
    -- VOLATILE: in READ COMMITTED each call reads with a fresh snapshot, so a push that checks
    -- after waiting for the user's lock sees an erasure marker committed while it waited (a
    -- STABLE function would read with the snapshot its statement began with).
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_catalog
    AS $$
    BEGIN
        RETURN NOT EXISTS (SELECT 1 FROM tenants t WHERE t.id = p_tenant)
            OR EXISTS (SELECT 1 FROM erased_users e
                       WHERE e.tenant_id = p_tenant AND e.user_hash = habitsync_erased_user_hash(p_tenant, p_user));
    END
    $$;
COMMENT ON FUNCTION habitsync_user_erased(uuid, text) IS 'Whether the user''s account was erased (and not allowed again), or their whole tenant (a token verified with a key cached before the tenant''s erasure). Every push, pull and import checks it.';
REVOKE ALL ON FUNCTION habitsync_user_erased(uuid, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION habitsync_user_erased(uuid, text) TO habitsync_app;

-- The request scope must name the tenant and user (a request) or the tenant with scope
-- 'tenant' (an admin command): a caller can only ever mark or erase what its scope covers.
CREATE FUNCTION habitsync_assert_erasure_scope(p_tenant uuid, p_user text) RETURNS void
    LANGUAGE plpgsql STABLE SET search_path = public, pg_catalog
    AS $$
    BEGIN
        IF p_tenant IS DISTINCT FROM habitsync_current_tenant_id()
           OR (p_user IS NULL AND (habitsync_current_user_id() IS NOT NULL OR current_setting('habitsync.scope', true) IS DISTINCT FROM 'tenant'))
           OR (p_user IS NOT NULL AND p_user IS DISTINCT FROM habitsync_current_user_id() AND current_setting('habitsync.scope', true) IS DISTINCT FROM 'tenant') THEN
            RAISE EXCEPTION 'erasure outside the request scope' USING ERRCODE = 'insufficient_privilege';
        END IF;
    END
    $$;
COMMENT ON FUNCTION habitsync_assert_erasure_scope(uuid, text) IS 'Refuses an erasure the transaction''s request scope does not cover.';

CREATE FUNCTION habitsync_mark_user_erased(p_tenant uuid, p_user text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_catalog
    AS $$
    BEGIN
        PERFORM habitsync_assert_erasure_scope(p_tenant, p_user);
        INSERT INTO erasure_keys (tenant_id) VALUES (p_tenant) ON CONFLICT (tenant_id) DO NOTHING;
        INSERT INTO erased_users (tenant_id, user_hash) VALUES (p_tenant, habitsync_erased_user_hash(p_tenant, p_user))
        ON CONFLICT (tenant_id, user_hash) DO NOTHING;
    END
    $$;
COMMENT ON FUNCTION habitsync_mark_user_erased(uuid, text) IS 'Remembers that a user is erased (committed before the rows are deleted, so a push racing the erasure either ends before the deletion or is refused).';
REVOKE ALL ON FUNCTION habitsync_mark_user_erased(uuid, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION habitsync_mark_user_erased(uuid, text) TO habitsync_app;

CREATE FUNCTION habitsync_allow_user_again(p_tenant uuid, p_user text) RETURNS boolean
    LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_catalog
    AS $$
        WITH removed AS (
            DELETE FROM erased_users WHERE tenant_id = p_tenant AND user_hash = habitsync_erased_user_hash(p_tenant, p_user) RETURNING 1
        )
        SELECT EXISTS (SELECT 1 FROM removed)
    $$;
COMMENT ON FUNCTION habitsync_allow_user_again(uuid, text) IS 'Removes an erasure marker (admins only: user allow-again); true when there was one.';
REVOKE ALL ON FUNCTION habitsync_allow_user_again(uuid, text) FROM PUBLIC;

-- The tables that hold per-user rows: every ordinary table (partitions included, partitioned
-- parents excluded: their rows live in the partitions) with tenant_id uuid and user_id text.
CREATE FUNCTION habitsync_user_tables() RETURNS TABLE (relation regclass, label text, referenced boolean)
    LANGUAGE sql STABLE SET search_path = public, pg_catalog
    AS $$
        SELECT c.oid::regclass,
               -- public partitions count under their partitioned table; archived ones by name.
               CASE WHEN c.relispartition THEN pg_partition_root(c.oid)::regclass::text ELSE c.oid::regclass::text END,
               EXISTS (SELECT 1 FROM pg_constraint f WHERE f.contype = 'f' AND f.confrelid = c.oid AND f.conrelid <> c.oid)
        FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind = 'r'
          AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\_%'
          AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenant_id' AND a.atttypid = 'uuid'::regtype AND NOT a.attisdropped)
          AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'user_id' AND a.atttypid = 'text'::regtype AND NOT a.attisdropped)
    $$;
COMMENT ON FUNCTION habitsync_user_tables() IS 'Every table holding per-user rows (tenant_id uuid and user_id text), from the catalog; referenced = another table''s foreign key points at it.';

-- The request role cannot read the archive schema (maintenance moves old usage-event months
-- there, for analysts). An export reads the caller's archived events through this function
-- instead, one archived partition and one page at a time: only a partition of the archive,
-- only inside the caller's own request scope.
CREATE FUNCTION habitsync_archived_usage_events(p_tenant uuid, p_user text, p_partition regclass, p_after bigint, p_limit integer)
    RETURNS SETOF usage_events
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_catalog
    AS $$
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
    $$;
COMMENT ON FUNCTION habitsync_archived_usage_events(uuid, text, regclass, bigint, integer) IS 'The caller''s usage events in one archived partition, after a server_version, for the account export; only within the request scope.';
REVOKE ALL ON FUNCTION habitsync_archived_usage_events(uuid, text, regclass, bigint, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION habitsync_archived_usage_events(uuid, text, regclass, bigint, integer) TO habitsync_app;

-- Erases (or with p_dry_run counts) the rows of one user, or with p_user NULL of every user of
-- the tenant and then the tenant itself. Returns the rows per table as they were when it began
-- (counted first: deleting some tables' rows fires triggers that rewrite derived tables), so a
-- dry run reports exactly what the erasure then reports. Tables other tables reference are
-- emptied after the tables that reference them; users last, whose cascade also removes rows a
-- trigger wrote meanwhile.
CREATE FUNCTION habitsync_erase(p_tenant uuid, p_user text, p_dry_run boolean)
    RETURNS TABLE (table_name text, row_count bigint)
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_catalog
    AS $$
    DECLARE
        t record;
        n bigint;
        counts jsonb := '{}'::jsonb;
        filter text := CASE WHEN p_user IS NULL THEN 'tenant_id = $1' ELSE 'tenant_id = $1 AND user_id = $2' END;
        tables regclass[];
    BEGIN
        PERFORM habitsync_assert_erasure_scope(p_tenant, p_user);
        SELECT array_agg(u.relation ORDER BY u.referenced, u.label, u.relation::text) INTO tables
        FROM habitsync_user_tables() u WHERE u.relation <> 'users'::regclass;
        FOR t IN SELECT u.relation, u.label FROM habitsync_user_tables() u LOOP
            EXECUTE format('SELECT count(*) FROM %s WHERE %s', t.relation, filter) INTO n USING p_tenant, p_user;
            IF n > 0 THEN
                counts := jsonb_set(counts, ARRAY[t.label], to_jsonb(coalesce((counts ->> t.label)::bigint, 0) + n));
            END IF;
        END LOOP;
        IF p_user IS NULL THEN
            SELECT count(*) INTO n FROM tenant_keys k WHERE k.tenant_id = p_tenant;
            counts := counts || jsonb_build_object('tenant_keys', n);
            SELECT count(*) INTO n FROM erased_users e WHERE e.tenant_id = p_tenant;
            IF n > 0 THEN counts := counts || jsonb_build_object('erased_users', n); END IF;
            SELECT count(*) INTO n FROM tenants x WHERE x.id = p_tenant;
            counts := counts || jsonb_build_object('tenants', n);
        END IF;
        IF NOT p_dry_run THEN
            FOR i IN 1 .. coalesce(array_length(tables, 1), 0) LOOP
                EXECUTE format('DELETE FROM %s WHERE %s', tables[i], filter) USING p_tenant, p_user;
            END LOOP;
            EXECUTE 'DELETE FROM users WHERE ' || filter USING p_tenant, p_user;
            IF p_user IS NULL THEN
                DELETE FROM tenant_keys k WHERE k.tenant_id = p_tenant;
                DELETE FROM erased_users e WHERE e.tenant_id = p_tenant;
                DELETE FROM erasure_keys e WHERE e.tenant_id = p_tenant;
                DELETE FROM tenants x WHERE x.id = p_tenant;
            END IF;
        END IF;
        RETURN QUERY SELECT key, value::bigint FROM jsonb_each_text(counts) ORDER BY key;
    END
    $$;
COMMENT ON FUNCTION habitsync_erase(uuid, text, boolean) IS 'Erases (or counts, with p_dry_run) every row of a user, or with p_user NULL of a whole tenant, in every table habitsync_user_tables() finds; returns the rows per table. Runs only inside a request scope that covers it.';
REVOKE ALL ON FUNCTION habitsync_erase(uuid, text, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION habitsync_erase(uuid, text, boolean) TO habitsync_app;
