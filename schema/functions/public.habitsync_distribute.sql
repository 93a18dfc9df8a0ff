-- public.habitsync_distribute(p_shard_count integer)
-- Distributes the schema and its rows over a Citus cluster (reference tables, per-user tables by user_id co-located with users, functions on every node); every row once or nothing; idempotent. habitsync-server distribute runs it.

CREATE OR REPLACE FUNCTION public.habitsync_distribute(p_shard_count integer DEFAULT NULL::integer)
 RETURNS TABLE(relation text, became text)
 LANGUAGE plpgsql
 SET search_path TO 'public', 'pg_catalog'
AS $function$
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
          AND (c.relname = ANY (habitsync_reference_tables())
               OR c.oid IN (SELECT CASE WHEN p.relispartition THEN pg_partition_root(p.oid) ELSE p.oid END
                            FROM habitsync_user_tables() u JOIN pg_class p ON p.oid = u.relation))
          AND NOT EXISTS (SELECT 1 FROM pg_dist_partition d WHERE d.logicalrelid = c.oid)
    LOOP
        EXECUTE format('SELECT count(*) FROM %s', target.tbl) INTO n;
        before_counts := before_counts || jsonb_build_object(target.tbl::text, n);
    END LOOP;

    -- 2. Reference tables (habitsync_reference_tables()).
    FOR target IN
        SELECT c.oid::regclass AS tbl FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
          AND c.relname = ANY (habitsync_reference_tables())
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
$function$

-- Privileges
-- none but the owner's
