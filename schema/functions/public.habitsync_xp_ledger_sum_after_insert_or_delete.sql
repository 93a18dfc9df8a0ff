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
        CONTINUE WHEN touched.total IS NULL OR touched.total = 0;
        EXECUTE format('UPDATE users SET xp_ledger_sum = xp_ledger_sum + %s WHERE tenant_id = %L AND user_id = %L',
                       CASE TG_OP WHEN 'DELETE' THEN -touched.total ELSE touched.total END, touched.tenant_id, touched.user_id);
    END LOOP;
    RETURN NULL;
END
$function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
