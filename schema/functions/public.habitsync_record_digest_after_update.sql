-- public.habitsync_record_digest_after_update()
-- Statement trigger (OLD TABLE updated_old, NEW TABLE updated_new): moves users.record_digests from the live rows before to those after. Arguments: collection, 'tombstones' or 'live'.

CREATE OR REPLACE FUNCTION public.habitsync_record_digest_after_update()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
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
$function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
