-- public.habitsync_xp_transaction_record_json(x xp_transactions)
-- An xp_transactions row as its wire record, as JSON text (the same value as habitsync_xp_transaction_record).

CREATE OR REPLACE FUNCTION public.habitsync_xp_transaction_record_json(x xp_transactions)
 RETURNS text
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$
        SELECT concat(
            '{"amount":', habitsync_json_integer(x.amount),
            ',"reason":', habitsync_json_text(x.reason),
            ',"timestamp":', habitsync_json_time(x.occurred_at),
            ',"date":', habitsync_json_date(x.date), '}')
    $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
