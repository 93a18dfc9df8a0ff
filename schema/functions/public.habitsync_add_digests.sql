-- public.habitsync_add_digests(p_digests jsonb, p_pending jsonb)
-- record_digests with the deltas of p_pending ({"habits": {"count": n, "xor": x}}) added: counts summed, terms XORed.

CREATE OR REPLACE FUNCTION public.habitsync_add_digests(p_digests jsonb, p_pending jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
DECLARE
    collection text;
    delta jsonb;
    result jsonb := coalesce(p_digests, '{}'::jsonb);
BEGIN
    IF p_pending IS NULL THEN RETURN result; END IF;
    FOR collection, delta IN SELECT e.key, e.value FROM jsonb_each(p_pending) AS e LOOP
        result := jsonb_set(result, ARRAY[collection], jsonb_build_object(
            'count', coalesce((result #>> ARRAY[collection, 'count'])::bigint, 0) + (delta ->> 'count')::bigint,
            'xor', coalesce((result #>> ARRAY[collection, 'xor'])::bigint, 0) # (delta ->> 'xor')::bigint));
    END LOOP;
    RETURN result;
END
$function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
