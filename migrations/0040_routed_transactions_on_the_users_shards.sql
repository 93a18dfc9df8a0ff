-- Issue 47: on Citus a routed transaction (deploy/README.md, "Routing to the user's node")
-- names the user's shards instead of the distributed tables, so the worker plans its
-- statements with the standard planner and keeps the plans, as one server does. Two things
-- make that safe and cheap.
--
-- habitsync_hold_shard: the transaction's first statement. It takes the shard metadata lock a
-- shard move's last step waits for (Citus' own writes take the same lock, share mode), so the
-- user's shards cannot move away while the transaction writes them, and then checks that this
-- node still holds them: a transaction that arrives after a move is refused (HS421) before it
-- reads or writes anything, and the server runs it again where the shards now are. Without it a
-- write could land in the old copy after the move had copied the rows and be lost with it.
-- SECURITY DEFINER: Citus lets only the tables' owner take the lock.
CREATE FUNCTION habitsync_hold_shard(p_shard bigint) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = public, pg_catalog
    AS $$
BEGIN
    PERFORM lock_shard_metadata(5, ARRAY[p_shard]);
    IF NOT EXISTS (SELECT 1 FROM pg_dist_placement p
                   WHERE p.shardid = p_shard AND p.groupid = (SELECT groupid FROM pg_dist_local_group)) THEN
        RAISE EXCEPTION 'the user''s shard % is not on this node', p_shard USING ERRCODE = 'HS421';
    END IF;
END
$$;
COMMENT ON FUNCTION habitsync_hold_shard(bigint) IS 'Citus: holds a user''s shard against a move for this transaction and refuses (HS421) when this node no longer holds it.';
REVOKE ALL ON FUNCTION habitsync_hold_shard(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION habitsync_hold_shard(bigint) TO habitsync_app;

-- The triggers' one statement on another table of the user's (0036): in a routed transaction
-- the server names the user's shard of derived_streak_months in habitsync.streak_months_shard,
-- and the delete goes there, planned as a plain table's, instead of through Citus' planner.
-- The function runs as the caller: the name can reach no table the caller may not delete from.
CREATE OR REPLACE FUNCTION habitsync_forget_streak_month(p_tenant uuid, p_user text, p_month date) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF current_setting('citus.shard_count', true) IS NOT NULL THEN
        EXECUTE format('DELETE FROM %I WHERE tenant_id = %L AND user_id = %L AND month = %L',
                       coalesce(nullif(current_setting('habitsync.streak_months_shard', true), ''), 'derived_streak_months'),
                       p_tenant, p_user, p_month);
    ELSE
        DELETE FROM derived_streak_months WHERE tenant_id = p_tenant AND user_id = p_user AND month = p_month;
    END IF;
END
$$;

-- The erasure check every push and pull asks (0035): on a Citus node it reads this node's own
-- copies of the reference tables, as one server reads its tables, instead of going through
-- Citus' planner for each (a reference table has one shard, copied to every node and written on
-- all of them in one transaction, so the local copy is current). The copies' names come from
-- the catalog, never from the caller: the function runs as the tables' owner. Where the node
-- holds no copy (a coordinator without reference placements), the check goes through Citus as
-- before. Same answer either way (CitusTests' erasure tests on every node).
CREATE OR REPLACE FUNCTION habitsync_user_erased(p_tenant uuid, p_user text) RETURNS boolean
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_catalog
    AS $$
    DECLARE
        copies text[];
        erased boolean;
    BEGIN
        IF current_setting('citus.shard_count', true) IS NOT NULL THEN
            SELECT array_agg(c.relation || '_' || c.shardid ORDER BY c.relation) INTO copies
            FROM (SELECT s.logicalrelid::regclass::text AS relation, s.shardid
                  FROM pg_dist_shard s JOIN pg_dist_placement p ON p.shardid = s.shardid
                  WHERE s.logicalrelid IN ('erased_users'::regclass, 'erasure_keys'::regclass, 'tenants'::regclass)
                    AND p.groupid = (SELECT groupid FROM pg_dist_local_group)) c;
            IF cardinality(copies) = 3 THEN
                EXECUTE format('SELECT NOT EXISTS (SELECT 1 FROM %3$I t WHERE t.id = $1)
                                    OR EXISTS (SELECT 1 FROM %2$I k
                                               JOIN %1$I e ON e.tenant_id = k.tenant_id AND e.user_hash = sha256(k.key || convert_to($2, ''UTF8''))
                                               WHERE k.tenant_id = $1)', copies[1], copies[2], copies[3])
                    INTO erased USING p_tenant, p_user;
                RETURN erased;
            END IF;
        END IF;
        RETURN NOT EXISTS (SELECT 1 FROM tenants t WHERE t.id = p_tenant)
            OR EXISTS (SELECT 1 FROM erasure_keys k
                       JOIN erased_users e ON e.tenant_id = k.tenant_id AND e.user_hash = sha256(k.key || convert_to(p_user, 'UTF8'))
                       WHERE k.tenant_id = p_tenant);
    END
    $$;
