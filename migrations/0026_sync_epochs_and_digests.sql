-- Devices prove they hold what the server holds (docs/protocol.md, "Epochs" and "Digests").
--
-- 1. Epochs. The database has one (sync_epoch), which `habitsync-server epoch rotate` replaces
--    after a backup is restored; each users row has its own (account_epoch), random when the
--    row is made, so an account erased and allowed again starts in a new one. A device sends
--    the epoch it last synced in; one from another timeline is told what to do instead of
--    being answered as if nothing had happened. users.database_epoch is the database's epoch
--    copied into the row (the request reads one row, on Citus on the user's worker), and
--    users.restored_through is the user's counter when the epoch was rotated: what the
--    restored database holds of the user.
-- 2. Digests. users.record_digests keeps, per collection, the number of the user's live
--    records and the XOR of one term per record (habitsync_digest_term), maintained by
--    statement triggers as rows change (also by hand, in psql), so the last page of a pull
--    reports it at the cost of one row whatever the user's history.

CREATE FUNCTION habitsync_new_epoch() RETURNS text
    LANGUAGE sql VOLATILE
    -- 64 of gen_random_uuid()'s random bits (byte 7 holds its version nibble).
    AS $$ SELECT encode(substr(uuid_send(gen_random_uuid()), 9, 8), 'hex') $$;
COMMENT ON FUNCTION habitsync_new_epoch() IS 'A new random epoch: 16 lowercase hexadecimal digits.';

CREATE TABLE sync_epoch (
    singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    epoch      text NOT NULL CHECK (epoch ~ '^[0-9a-f]{16}$'),
    rotated_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE sync_epoch IS 'The database''s sync epoch (one row). habitsync-server epoch rotate replaces it after a backup is restored: devices that synced in another epoch push again what the restored database lacks.';
COMMENT ON COLUMN sync_epoch.singleton IS 'Always true: the table has one row.';
COMMENT ON COLUMN sync_epoch.epoch IS 'The current epoch, 16 lowercase hexadecimal digits.';
COMMENT ON COLUMN sync_epoch.rotated_at IS 'When it was made (migration) or last rotated.';
INSERT INTO sync_epoch (epoch) VALUES (habitsync_new_epoch());

-- Not a secret: every device is told it. Read by the request role directly (on Citus a
-- SECURITY DEFINER function's read of a reference table still reaches the shards as the
-- request role).
GRANT SELECT ON sync_epoch TO habitsync_app;
GRANT SELECT ON sync_epoch TO habitsync_analyst;

CREATE FUNCTION habitsync_database_epoch() RETURNS text
    LANGUAGE sql STABLE
    AS $$ SELECT epoch FROM sync_epoch $$;
COMMENT ON FUNCTION habitsync_database_epoch() IS 'The database''s current sync epoch (sync_epoch.epoch).';

-- Existing rows take constants (no volatile default rewrites the table, which Citus would
-- refuse); rows made from now on take a random account epoch and the current database epoch.
ALTER TABLE users
    ADD COLUMN account_epoch text NOT NULL DEFAULT '0000000000000000' CHECK (account_epoch ~ '^[0-9a-f]{16}$'),
    ADD COLUMN database_epoch text NOT NULL DEFAULT '0000000000000000' CHECK (database_epoch ~ '^[0-9a-f]{16}$'),
    ADD COLUMN restored_through bigint NOT NULL DEFAULT 0 CHECK (restored_through >= 0),
    ADD COLUMN record_digests jsonb NOT NULL DEFAULT '{}';
ALTER TABLE users ALTER COLUMN account_epoch SET DEFAULT habitsync_new_epoch();
ALTER TABLE users ALTER COLUMN database_epoch SET DEFAULT habitsync_database_epoch();
COMMENT ON COLUMN users.account_epoch IS 'The account''s sync epoch, random when the row is made: an account erased and allowed again has a new one, and devices of the old account are told to discard it.';
COMMENT ON COLUMN users.database_epoch IS 'sync_epoch.epoch when the row was made or the epoch last rotated.';
COMMENT ON COLUMN users.restored_through IS 'change_counter when the database epoch was last rotated: the versions a restored database holds of the user. Devices push again what they hold above it.';
COMMENT ON COLUMN users.record_digests IS 'Per collection, the user''s live records: {"habits": {"count": n, "xor": x}}, x the XOR of habitsync_digest_term(id, server_version). Kept by triggers; the last page of a pull reports it.';

UPDATE users SET database_epoch = habitsync_database_epoch();

CREATE FUNCTION habitsync_digest_term(p_id uuid, p_version bigint) RETURNS bigint
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT ('x' || substr(md5(p_id::text || ':' || p_version::text), 1, 16))::bit(64)::bigint $$;
COMMENT ON FUNCTION habitsync_digest_term(uuid, bigint) IS 'A live record''s term of its collection''s digest: the first 8 bytes of md5(''<id>:<server_version>''), as a signed 64-bit number.';

-- As the triggers of 0014: the transition table is read on its own, and users is written one
-- user at a time with literals, which routes to the user's shard on Citus. TG_ARGV[0] is the
-- collection's wire name; TG_ARGV[1] 'tombstones' for tables whose deleted rows stay as
-- tombstones (deleted_at), which are not live. (PL/pgSQL plans a branch when it first runs, per
-- table, so the derived tables, which have no deleted_at, never plan the other one.)
CREATE FUNCTION habitsync_record_digest_move(p_collection text, p_tenant uuid, p_user text, p_count bigint, p_xor bigint) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF p_count = 0 AND p_xor = 0 THEN RETURN; END IF;
    EXECUTE format($sql$UPDATE users SET record_digests = jsonb_set(record_digests, '{%1$s}', jsonb_build_object(
                'count', coalesce((record_digests #>> '{%1$s,count}')::bigint, 0) + %2$s,
                'xor', coalesce((record_digests #>> '{%1$s,xor}')::bigint, 0) # %3$s))
            WHERE tenant_id = %4$L AND user_id = %5$L$sql$, p_collection, p_count, p_xor, p_tenant, p_user);
END
$$;
COMMENT ON FUNCTION habitsync_record_digest_move(text, uuid, text, bigint, bigint) IS 'Adds to a user''s digest of a collection (users.record_digests): count by p_count, terms by XOR.';

CREATE FUNCTION habitsync_record_digest_after_insert_or_delete() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    touched record;
    sign integer := CASE TG_OP WHEN 'DELETE' THEN -1 ELSE 1 END;
BEGIN
    IF TG_ARGV[1] = 'tombstones' THEN
        FOR touched IN SELECT tenant_id, user_id, count(*) AS n, bit_xor(habitsync_digest_term(id, server_version)) AS x
                       FROM changed WHERE deleted_at IS NULL GROUP BY tenant_id, user_id LOOP
            PERFORM habitsync_record_digest_move(TG_ARGV[0], touched.tenant_id, touched.user_id, sign * touched.n, touched.x);
        END LOOP;
    ELSE
        FOR touched IN SELECT tenant_id, user_id, count(*) AS n, bit_xor(habitsync_digest_term(id, server_version)) AS x
                       FROM changed GROUP BY tenant_id, user_id LOOP
            PERFORM habitsync_record_digest_move(TG_ARGV[0], touched.tenant_id, touched.user_id, sign * touched.n, touched.x);
        END LOOP;
    END IF;
    RETURN NULL;
END
$$;

COMMENT ON FUNCTION habitsync_record_digest_after_insert_or_delete() IS 'Statement trigger (NEW or OLD TABLE changed): moves users.record_digests by the live rows inserted or deleted. Arguments: collection, ''tombstones'' or ''live''.';

CREATE FUNCTION habitsync_record_digest_after_update() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    touched record;
BEGIN
    IF TG_ARGV[1] = 'tombstones' THEN
        FOR touched IN
            SELECT tenant_id, user_id, sum(n) AS n, bit_xor(x) AS x FROM (
                SELECT tenant_id, user_id, 1 AS n, habitsync_digest_term(id, server_version) AS x FROM updated_new WHERE deleted_at IS NULL
                UNION ALL
                SELECT tenant_id, user_id, -1, habitsync_digest_term(id, server_version) FROM updated_old WHERE deleted_at IS NULL) d
            GROUP BY tenant_id, user_id
        LOOP
            PERFORM habitsync_record_digest_move(TG_ARGV[0], touched.tenant_id, touched.user_id, touched.n, touched.x);
        END LOOP;
    ELSE
        FOR touched IN
            SELECT tenant_id, user_id, sum(n) AS n, bit_xor(x) AS x FROM (
                SELECT tenant_id, user_id, 1 AS n, habitsync_digest_term(id, server_version) AS x FROM updated_new
                UNION ALL
                SELECT tenant_id, user_id, -1, habitsync_digest_term(id, server_version) FROM updated_old) d
            GROUP BY tenant_id, user_id
        LOOP
            PERFORM habitsync_record_digest_move(TG_ARGV[0], touched.tenant_id, touched.user_id, touched.n, touched.x);
        END LOOP;
    END IF;
    RETURN NULL;
END
$$;

COMMENT ON FUNCTION habitsync_record_digest_after_update() IS 'Statement trigger (OLD TABLE updated_old, NEW TABLE updated_new): moves users.record_digests from the live rows before to those after. Arguments: collection, ''tombstones'' or ''live''.';

-- Every collection but usageEvents: events are append-only and leave the table by month
-- (maintenance archives a month by detaching its partition, which runs no trigger).
DO $$
DECLARE
    target record;
BEGIN
    PERFORM set_config('citus.enable_unsafe_triggers', 'on', true);
    ALTER TABLE users NO FORCE ROW LEVEL SECURITY;
    FOR target IN SELECT * FROM (VALUES
        ('habits', 'habits', 'tombstones'), ('reminders', 'reminders', 'tombstones'),
        ('daily_progress', 'dailyProgress', 'tombstones'), ('xp_transactions', 'xpTransactions', 'tombstones'),
        ('achievements', 'achievements', 'tombstones'), ('focus_sessions', 'focusSessions', 'tombstones'),
        ('selected_apps', 'selectedApps', 'tombstones'), ('user_settings', 'userSettings', 'tombstones'),
        ('global_streaks', 'globalStreak', 'live'), ('user_progress', 'userProgress', 'live'),
        ('usage_streaks', 'usageStreak', 'live')) t (tbl, collection, kind)
    LOOP
        EXECUTE format('CREATE TRIGGER record_digest_after_insert AFTER INSERT ON %I REFERENCING NEW TABLE AS changed '
                       'FOR EACH STATEMENT EXECUTE FUNCTION habitsync_record_digest_after_insert_or_delete(%L, %L)',
                       target.tbl, target.collection, target.kind);
        EXECUTE format('CREATE TRIGGER record_digest_after_update AFTER UPDATE ON %I REFERENCING OLD TABLE AS updated_old NEW TABLE AS updated_new '
                       'FOR EACH STATEMENT EXECUTE FUNCTION habitsync_record_digest_after_update(%L, %L)',
                       target.tbl, target.collection, target.kind);
        EXECUTE format('CREATE TRIGGER record_digest_after_delete AFTER DELETE ON %I REFERENCING OLD TABLE AS changed '
                       'FOR EACH STATEMENT EXECUTE FUNCTION habitsync_record_digest_after_insert_or_delete(%L, %L)',
                       target.tbl, target.collection, target.kind);
        -- The digests of the rows already there, one statement per table.
        EXECUTE format($sql$ALTER TABLE %1$I NO FORCE ROW LEVEL SECURITY;
            UPDATE users u SET record_digests = jsonb_set(u.record_digests, '{%2$s}', jsonb_build_object('count', d.n, 'xor', d.x))
            FROM (SELECT tenant_id, user_id, count(*) AS n, bit_xor(habitsync_digest_term(id, server_version)) AS x
                  FROM %1$I %3$s GROUP BY tenant_id, user_id) d
            WHERE u.tenant_id = d.tenant_id AND u.user_id = d.user_id;
            ALTER TABLE %1$I FORCE ROW LEVEL SECURITY$sql$,
            target.tbl, target.collection, CASE target.kind WHEN 'tombstones' THEN 'WHERE deleted_at IS NULL' ELSE '' END);
    END LOOP;
    ALTER TABLE users FORCE ROW LEVEL SECURITY;
END
$$;

-- sync_epoch is a reference table on Citus, like tenants: every node reads it (a users row's
-- default, habitsync_database_epoch()), and no table stays on the coordinator alone. The body
-- of habitsync_distribute (0020) with sync_epoch added to its reference tables; nothing else
-- changes. A database distributed before this migration makes it one here.
DO $$
BEGIN
    -- Nested: PL/pgSQL plans the inner test (pg_dist_partition) only where Citus is.
    IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
        IF EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = 'users'::regclass) THEN
            PERFORM create_reference_table('sync_epoch');
        END IF;
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION habitsync_distribute(p_shard_count integer DEFAULT NULL)
    RETURNS TABLE (relation text, became text)
    LANGUAGE plpgsql
    SET search_path = public, pg_catalog
    AS $$
DECLARE
    fk record;
    saved_keys text[] := '{}';
    target record;
    fn record;
    trg record;
    saved_triggers text[] := '{}';
    distributed_now regclass[] := '{}';
    before_counts jsonb := '{}';
    n bigint;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
        RAISE EXCEPTION 'the citus extension is not installed in this database'
            USING ERRCODE = 'feature_not_supported', HINT = 'CREATE EXTENSION citus on the coordinator and every worker, and add the workers (citus_add_node), first.';
    END IF;
    -- Not only when users exist: a role that row-level security filters would see none.
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = current_user AND (rolsuper OR rolbypassrls)) THEN
        RAISE EXCEPTION 'distribute needs a superuser: row-level security would hide rows from the copy into the shards'
            USING ERRCODE = 'insufficient_privilege', HINT = 'Run habitsync-server distribute with a superuser''s DATABASE_URL.';
    END IF;
    PERFORM set_config('citus.multi_shard_modify_mode', 'sequential', true);
    PERFORM set_config('citus.enable_unsafe_triggers', 'on', true);
    IF p_shard_count IS NOT NULL THEN
        PERFORM set_config('citus.shard_count', p_shard_count::text, true);
    END IF;

    -- 1. Foreign keys whose either end is not yet a Citus table.
    FOR fk IN
        SELECT c.conname, c.conrelid::regclass AS tbl, pg_get_constraintdef(c.oid) AS definition
        FROM pg_constraint c
        WHERE c.contype = 'f'
          AND NOT EXISTS (SELECT 1 FROM pg_class p WHERE p.oid = c.conrelid AND p.relispartition)
          AND (NOT EXISTS (SELECT 1 FROM pg_dist_partition d WHERE d.logicalrelid = c.conrelid)
               OR NOT EXISTS (SELECT 1 FROM pg_dist_partition d WHERE d.logicalrelid = c.confrelid))
        ORDER BY 2::text, 1
    LOOP
        saved_keys := saved_keys || format('ALTER TABLE %s ADD CONSTRAINT %I %s', fk.tbl, fk.conname, fk.definition);
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', fk.tbl, fk.conname);
    END LOOP;

    -- 1b. Triggers of the tables about to be distributed (a partitioned table's, which its
    -- partitions inherit, once), and the rows of each.
    FOR trg IN
        SELECT t.tgname, t.tgrelid::regclass AS tbl, pg_get_triggerdef(t.oid) AS definition
        FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE NOT t.tgisinternal AND t.tgparentid = 0 AND n.nspname IN ('public', 'archive')
          AND NOT EXISTS (SELECT 1 FROM pg_dist_partition d WHERE d.logicalrelid = t.tgrelid)
        ORDER BY 2::text, 1
    LOOP
        saved_triggers := saved_triggers || trg.definition;
        EXECUTE format('DROP TRIGGER %I ON %s', trg.tgname, trg.tbl);
    END LOOP;
    FOR target IN
        SELECT c.oid::regclass AS tbl FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname IN ('public', 'archive') AND c.relkind IN ('r', 'p') AND NOT c.relispartition
          AND (c.relname IN ('tenants', 'tenant_keys', 'erasure_keys', 'erased_users', 'sync_epoch')
               OR c.oid IN (SELECT CASE WHEN p.relispartition THEN pg_partition_root(p.oid) ELSE p.oid END
                            FROM habitsync_user_tables() u JOIN pg_class p ON p.oid = u.relation))
          AND NOT EXISTS (SELECT 1 FROM pg_dist_partition d WHERE d.logicalrelid = c.oid)
    LOOP
        EXECUTE format('SELECT count(*) FROM %s', target.tbl) INTO n;
        before_counts := before_counts || jsonb_build_object(target.tbl::text, n);
    END LOOP;

    -- 2. Reference tables: public tables with a tenant_id or an id of tenants, and no user_id;
    -- sync_epoch, which every node reads.
    FOR target IN
        SELECT c.oid::regclass AS tbl FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
          AND c.relname IN ('tenants', 'tenant_keys', 'erasure_keys', 'erased_users', 'sync_epoch')
          AND NOT EXISTS (SELECT 1 FROM pg_dist_partition d WHERE d.logicalrelid = c.oid)
        ORDER BY c.relname <> 'tenants', c.relname
    LOOP
        PERFORM create_reference_table(target.tbl);
        distributed_now := distributed_now || target.tbl;
        relation := target.tbl::text; became := 'reference'; RETURN NEXT;
    END LOOP;

    -- 3. users by user_id, then every per-user table with it.
    IF NOT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = 'users'::regclass) THEN
        PERFORM create_distributed_table('users', 'user_id');
        distributed_now := distributed_now || 'users'::regclass;
        relation := 'users'; became := 'distributed by user_id'; RETURN NEXT;
    END IF;
    FOR target IN
        SELECT DISTINCT t.tbl FROM (
            SELECT (CASE WHEN c.relispartition THEN pg_partition_root(c.oid) ELSE c.oid END)::regclass AS tbl
            FROM habitsync_user_tables() u JOIN pg_class c ON c.oid = u.relation) t
        WHERE t.tbl <> 'users'::regclass
          AND NOT EXISTS (SELECT 1 FROM pg_dist_partition d WHERE d.logicalrelid = t.tbl)
        ORDER BY 1
    LOOP
        PERFORM create_distributed_table(target.tbl, 'user_id', colocate_with => 'users');
        distributed_now := distributed_now || target.tbl;
        relation := target.tbl::text; became := 'distributed by user_id, with users'; RETURN NEXT;
    END LOOP;

    -- 4. Functions, and the request role's login.
    FOR fn IN
        SELECT p.oid::regprocedure AS signature FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = 'public' AND p.proname LIKE 'habitsync\_%' AND p.prokind = 'f'
          AND p.proname <> 'habitsync_distribute'
          AND NOT EXISTS (SELECT 1 FROM pg_dist_object o WHERE o.classid = 'pg_proc'::regclass AND o.objid = p.oid)
        ORDER BY 1::text
    LOOP
        PERFORM create_distributed_function(fn.signature);
        relation := fn.signature::text; became := 'function on every node'; RETURN NEXT;
    END LOOP;
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'habitsync_app' AND NOT rolcanlogin) THEN
        ALTER ROLE habitsync_app LOGIN;
        relation := 'habitsync_app'; became := 'role that may log in (Citus connects to workers as it)'; RETURN NEXT;
    END IF;

    -- 5. Every row once: counted through Citus now, as before. Then the coordinator's local
    -- copies go.
    FOR i IN 1 .. coalesce(array_length(distributed_now, 1), 0) LOOP
        EXECUTE format('SELECT count(*) FROM %s', distributed_now[i]) INTO n;
        IF n IS DISTINCT FROM (before_counts ->> distributed_now[i]::text)::bigint THEN
            RAISE EXCEPTION 'distribution of % would change its rows from % to %; nothing was distributed',
                distributed_now[i], before_counts ->> distributed_now[i]::text, n USING ERRCODE = 'data_exception';
        END IF;
        PERFORM truncate_local_data_after_distributing_table(distributed_now[i]);
    END LOOP;

    -- 6. The triggers again (on the shards too: Citus creates them there), then the foreign keys.
    FOR i IN 1 .. coalesce(array_length(saved_triggers, 1), 0) LOOP
        EXECUTE saved_triggers[i];
    END LOOP;
    FOR i IN 1 .. coalesce(array_length(saved_keys, 1), 0) LOOP
        EXECUTE saved_keys[i];
    END LOOP;
END
$$;
COMMENT ON FUNCTION habitsync_distribute(integer) IS 'Distributes the schema and its rows over a Citus cluster (reference tables, per-user tables by user_id co-located with users, functions on every node); every row once or nothing; idempotent. habitsync-server distribute runs it.';
REVOKE ALL ON FUNCTION habitsync_distribute(integer) FROM PUBLIC;
