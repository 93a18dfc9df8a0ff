-- Distribution over a Citus cluster (deploy/README.md, "Citus"), run by
-- `habitsync-server distribute` on the coordinator. Without the citus extension this migration
-- only creates the function, which then refuses to run.
--
-- habitsync_distribute(shard_count) turns a migrated database with no users yet into a
-- distributed one, in one transaction, and can be run again after later migrations (it only
-- does what is not done yet). The order is the only one found to work:
--
-- 1. Foreign keys between tables not yet distributed are dropped and kept (definitions) for
--    step 5: Citus would otherwise convert the whole foreign-key graph at the first
--    create_reference_table and trip on the usage-event partitions.
-- 2. Tables with no user_id (tenants, tenant_keys, erasure_keys, erased_users) become reference
--    tables, copied to every node: every per-user table refers to them.
-- 3. users is distributed by user_id, and every other per-user table (habitsync_user_tables(),
--    partitions by their partitioned table, which takes them along; archived months too) co-located with it: a
--    user's rows in every table sit on one shard, so one user's work is one node's work.
-- 4. Every habitsync_* function is copied to the workers (row-level security, constraints, the
--    wire records and the triggers run there, on the shards), and habitsync_app may log in:
--    Citus reaches the workers as the role of the request.
-- 5. The foreign keys come back.
--
-- The transaction runs sequentially on the workers (citus.multi_shard_modify_mode): a reference
-- table cannot be changed after a parallel operation in the same transaction.
CREATE FUNCTION habitsync_distribute(p_shard_count integer DEFAULT NULL)
    RETURNS TABLE (relation text, became text)
    LANGUAGE plpgsql
    SET search_path = public, pg_catalog
    AS $$
DECLARE
    fk record;
    saved_keys text[] := '{}';
    target record;
    fn record;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
        RAISE EXCEPTION 'the citus extension is not installed in this database'
            USING ERRCODE = 'feature_not_supported', HINT = 'CREATE EXTENSION citus on the coordinator and every worker, and add the workers (citus_add_node), first.';
    END IF;
    -- Citus copies a table's rows into its shards by inserting them there, which fires the
    -- derived-state triggers on the workers (xp_transactions' would add every amount to
    -- users.xp_ledger_sum a second time). Until that copy can run without them, only a
    -- database with no users yet is distributed.
    IF EXISTS (SELECT 1 FROM users)
       AND NOT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = 'users'::regclass) THEN
        RAISE EXCEPTION 'distribute works on a database with no users yet (copying rows into shards would run the derived-state triggers again)'
            USING ERRCODE = 'feature_not_supported', HINT = 'Distribute right after migrate up, before serving.';
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

    -- 2. Reference tables: public tables with a tenant_id or an id of tenants, and no user_id.
    FOR target IN
        SELECT c.oid::regclass AS tbl FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
          AND c.relname IN ('tenants', 'tenant_keys', 'erasure_keys', 'erased_users')
          AND NOT EXISTS (SELECT 1 FROM pg_dist_partition d WHERE d.logicalrelid = c.oid)
        ORDER BY c.relname <> 'tenants', c.relname
    LOOP
        PERFORM create_reference_table(target.tbl);
        relation := target.tbl::text; became := 'reference'; RETURN NEXT;
    END LOOP;

    -- 3. users by user_id, then every per-user table with it.
    IF NOT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = 'users'::regclass) THEN
        PERFORM create_distributed_table('users', 'user_id');
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

    -- 5. The foreign keys again.
    FOR i IN 1 .. coalesce(array_length(saved_keys, 1), 0) LOOP
        EXECUTE saved_keys[i];
    END LOOP;
END
$$;
COMMENT ON FUNCTION habitsync_distribute(integer) IS 'Distributes the schema over a Citus cluster (reference tables, per-user tables by user_id co-located with users, functions on every node); idempotent. habitsync-server distribute runs it.';
REVOKE ALL ON FUNCTION habitsync_distribute(integer) FROM PUBLIC;
