-- public.habitsync_record_digest_after_insert_or_delete()
-- Statement trigger (NEW or OLD TABLE changed): moves users.record_digests by the live rows inserted or deleted. Arguments: collection, 'tombstones' or 'live'.

CREATE OR REPLACE FUNCTION public.habitsync_record_digest_after_insert_or_delete()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
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
$function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
