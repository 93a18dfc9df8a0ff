-- public.habitsync_hold_shard(p_shard bigint)
-- Citus: holds a user's shard against a move for this transaction and refuses (HS421) when this node no longer holds it.

CREATE OR REPLACE FUNCTION public.habitsync_hold_shard(p_shard bigint)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'public', 'pg_catalog'
AS $function$
BEGIN
    PERFORM lock_shard_metadata(5, ARRAY[p_shard]);
    IF NOT EXISTS (SELECT 1 FROM pg_dist_placement p
                   WHERE p.shardid = p_shard AND p.groupid = (SELECT groupid FROM pg_dist_local_group)) THEN
        RAISE EXCEPTION 'the user''s shard % is not on this node', p_shard USING ERRCODE = 'HS421';
    END IF;
END
$function$

-- Privileges
GRANT EXECUTE ON FUNCTION public.habitsync_hold_shard(p_shard bigint) TO habitsync_app;
