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
        PERFORM habitsync_xp_ledger_move(touched.tenant_id, touched.user_id, touched.total);
    END LOOP;
    RETURN NULL;
END
$function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
