-- public.habitsync_user_erased(p_tenant uuid, p_user text)
-- Whether the user's account was erased (and not allowed again), or their whole tenant (a token verified with a key cached before the tenant's erasure). Every push, pull and import checks it.

CREATE OR REPLACE FUNCTION public.habitsync_user_erased(p_tenant uuid, p_user text)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'public', 'pg_catalog'
AS $function$
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
    $function$

-- Privileges
GRANT EXECUTE ON FUNCTION public.habitsync_user_erased(p_tenant uuid, p_user text) TO habitsync_app;
