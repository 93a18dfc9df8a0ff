-- public.habitsync_record_digest_move(p_collection text, p_tenant uuid, p_user text, p_count bigint, p_xor bigint)
-- Adds to a user's digest of a collection (users.record_digests): count by p_count, terms by XOR; inside a push (habitsync.defer_digests) to habitsync.pending_digests, which the push folds in with habitsync_add_digests.

CREATE OR REPLACE FUNCTION public.habitsync_record_digest_move(p_collection text, p_tenant uuid, p_user text, p_count bigint, p_xor bigint)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    pending jsonb;
BEGIN
    IF p_count = 0 AND p_xor = 0 THEN RETURN; END IF;
    IF habitsync_push_defers_for(p_tenant, p_user) THEN
        pending := coalesce(nullif(current_setting('habitsync.pending_digests', true), ''), '{}')::jsonb;
        pending := jsonb_set(pending, ARRAY[p_collection], jsonb_build_object(
            'count', coalesce((pending #>> ARRAY[p_collection, 'count'])::bigint, 0) + p_count,
            'xor', coalesce((pending #>> ARRAY[p_collection, 'xor'])::bigint, 0) # p_xor));
        PERFORM set_config('habitsync.pending_digests', pending::text, true);
        RETURN;
    END IF;
    EXECUTE format($sql$UPDATE users SET record_digests = jsonb_set(record_digests, '{%1$s}', jsonb_build_object(
                'count', coalesce((record_digests #>> '{%1$s,count}')::bigint, 0) + %2$s,
                'xor', coalesce((record_digests #>> '{%1$s,xor}')::bigint, 0) # %3$s))
            WHERE tenant_id = %4$L AND user_id = %5$L$sql$, p_collection, p_count, p_xor, p_tenant, p_user);
END
$function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
