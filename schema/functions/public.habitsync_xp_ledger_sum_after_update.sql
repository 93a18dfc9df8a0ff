-- public.habitsync_xp_ledger_sum_after_update()
-- Moves users.xp_ledger_sum by the difference of updated xp_transactions amounts.

CREATE OR REPLACE FUNCTION public.habitsync_xp_ledger_sum_after_update()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
DECLARE
    touched record;
BEGIN
    FOR touched IN
        SELECT tenant_id, user_id, sum(amount) AS total FROM (
            SELECT tenant_id, user_id, amount FROM updated_new
            UNION ALL SELECT tenant_id, user_id, -amount FROM updated_old) d
        GROUP BY tenant_id, user_id
    LOOP
        CONTINUE WHEN touched.total IS NULL OR touched.total = 0;
        EXECUTE format('UPDATE users SET xp_ledger_sum = xp_ledger_sum + %s WHERE tenant_id = %L AND user_id = %L',
                       touched.total, touched.tenant_id, touched.user_id);
    END LOOP;
    RETURN NULL;
END
$function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
