-- Issue 46: a push writes the user's row once, the XP ledger's running total included.
--
-- users.xp_ledger_sum (0011) is kept by triggers on xp_transactions, which updated the user's
-- row at once (0014: through EXECUTE, for Citus). In a push that earned daily-completion XP,
-- what phones send most (the day's first completion), that was a second write of the row the
-- push locks and closes: planned anew each time, and firing the row's foreign-key check on
-- tenants again, a FOR KEY SHARE every push of the tenant shares (a MultiXact each); the
-- award's insert was the costliest statement of such a check-in. Inside a push
-- (habitsync.defer_digests, 0034) the triggers now add the user's delta to a
-- transaction-local setting, habitsync.pending_xp_ledger, which the push's closing statement
-- adds to xp_ledger_sum, and which the push's own read of the total adds in meanwhile. Every
-- other writer (psql, maintenance, imports, a Citus worker, which does not see the setting)
-- keeps the immediate update. What "inside a push, for the push's own user" means is said once,
-- in habitsync_push_defers_for, which the digests' function (0034) now asks too.
CREATE FUNCTION habitsync_push_defers_for(p_tenant uuid, p_user text) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
        SELECT current_setting('habitsync.defer_digests', true) = 'on'
           AND p_tenant::text = current_setting('habitsync.tenant_id', true) AND p_user = current_setting('habitsync.user_id', true)
    $$;
COMMENT ON FUNCTION habitsync_push_defers_for(uuid, text) IS 'Whether this transaction is a push (habitsync.defer_digests) by the given user, whose writes of the users row the push folds into its closing statement.';

CREATE OR REPLACE FUNCTION habitsync_record_digest_move(p_collection text, p_tenant uuid, p_user text, p_count bigint, p_xor bigint) RETURNS void
    LANGUAGE plpgsql
    AS $$
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
$$;

CREATE FUNCTION habitsync_xp_ledger_move(p_tenant uuid, p_user text, p_delta bigint) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF p_delta IS NULL OR p_delta = 0 THEN RETURN; END IF;
    IF habitsync_push_defers_for(p_tenant, p_user) THEN
        PERFORM set_config('habitsync.pending_xp_ledger',
                           (coalesce(nullif(current_setting('habitsync.pending_xp_ledger', true), '')::bigint, 0) + p_delta)::text, true);
        RETURN;
    END IF;
    EXECUTE format('UPDATE users SET xp_ledger_sum = xp_ledger_sum + %s WHERE tenant_id = %L AND user_id = %L', p_delta, p_tenant, p_user);
END
$$;
COMMENT ON FUNCTION habitsync_xp_ledger_move(uuid, text, bigint) IS 'Adds p_delta to users.xp_ledger_sum; inside a push (habitsync.defer_digests) to habitsync.pending_xp_ledger, which the push adds in when it closes.';

CREATE OR REPLACE FUNCTION habitsync_xp_ledger_sum_after_insert_or_delete() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    touched record;
BEGIN
    FOR touched IN SELECT tenant_id, user_id, sum(amount) AS total FROM changed GROUP BY tenant_id, user_id LOOP
        PERFORM habitsync_xp_ledger_move(touched.tenant_id, touched.user_id, CASE TG_OP WHEN 'DELETE' THEN -touched.total ELSE touched.total END);
    END LOOP;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION habitsync_xp_ledger_sum_after_update() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
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
$$;
