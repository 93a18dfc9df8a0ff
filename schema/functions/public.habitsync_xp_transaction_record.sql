-- public.habitsync_xp_transaction_record(x xp_transactions)
-- An xp_transactions row as its wire record.

CREATE OR REPLACE FUNCTION public.habitsync_xp_transaction_record(x xp_transactions)
 RETURNS jsonb
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$
        SELECT jsonb_build_object(
            'amount', x.amount, 'reason', x.reason, 'timestamp', habitsync_wire_time(x.occurred_at), 'date', habitsync_wire_date(x.date))
    $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
