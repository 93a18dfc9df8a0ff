-- public.habitsync_xp_ledger_sum_after_insert_or_delete()
-- Adds inserted, or takes deleted, xp_transactions amounts to or off users.xp_ledger_sum.

CREATE OR REPLACE FUNCTION public.habitsync_xp_ledger_sum_after_insert_or_delete()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
DECLARE
    touched record;
BEGIN
    FOR touched IN SELECT tenant_id, user_id, sum(amount) AS total FROM changed GROUP BY tenant_id, user_id LOOP
        PERFORM habitsync_xp_ledger_move(touched.tenant_id, touched.user_id, CASE TG_OP WHEN 'DELETE' THEN -touched.total ELSE touched.total END);
    END LOOP;
    RETURN NULL;
END
$function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
