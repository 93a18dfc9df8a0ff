-- Issue 46: a push writes the user's row once, not once per statement that changed a digest.
--
-- The digest triggers (0026) updated users.record_digests from every statement that changed a
-- collection, each through a dynamic statement planned on every call: on an app-open check-in
-- that was a third of PostgreSQL's work for the day's one row. A push now sets
-- habitsync.defer_digests for its transaction (SET LOCAL): the triggers of that transaction add
-- their deltas for the request's own user to a transaction-local setting instead, and the
-- push's closing statement, which moves the user's counter anyway, folds them into
-- record_digests (habitsync_add_digests). Every other writer (psql, maintenance, imports, a
-- Citus worker, which does not see the setting) keeps today's immediate update.
CREATE OR REPLACE FUNCTION habitsync_record_digest_move(p_collection text, p_tenant uuid, p_user text, p_count bigint, p_xor bigint) RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    pending jsonb;
BEGIN
    IF p_count = 0 AND p_xor = 0 THEN RETURN; END IF;
    IF current_setting('habitsync.defer_digests', true) = 'on'
       AND p_tenant::text = current_setting('habitsync.tenant_id', true) AND p_user = current_setting('habitsync.user_id', true) THEN
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
COMMENT ON FUNCTION habitsync_record_digest_move(text, uuid, text, bigint, bigint) IS 'Adds to a user''s digest of a collection (users.record_digests): count by p_count, terms by XOR; inside a push (habitsync.defer_digests) to habitsync.pending_digests, which the push folds in with habitsync_add_digests.';

-- PL/pgSQL, not SQL: a SQL function with a subquery is not inlined, and starting its executor
-- for every call cost three times the loop.
CREATE FUNCTION habitsync_add_digests(p_digests jsonb, p_pending jsonb) RETURNS jsonb
    LANGUAGE plpgsql IMMUTABLE
    AS $$
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
$$;
COMMENT ON FUNCTION habitsync_add_digests(jsonb, jsonb) IS 'record_digests with the deltas of p_pending ({"habits": {"count": n, "xor": x}}) added: counts summed, terms XORed.';

-- Requests that write for a user (push, the pull's derived-state catch-up, legacy import, the
-- audit) lock an existing user's row with SELECT … FOR UPDATE, asking this before the lock (a
-- request arriving while an erasure holds or waits for the lock is refused at once) and again,
-- in a statement of its own, once it is granted; a push then writes the row once, at its end.
-- refuse_erased_user therefore fires on INSERT only: on UPDATE OF last_seen_at it checked a
-- second time what the lock has checked already, and a row written twice in one transaction
-- fires its foreign-key check on tenants again (FOR KEY SHARE on the tenant's row, shared by
-- every push of the tenant).
CREATE FUNCTION habitsync_assert_not_erased(p_tenant uuid, p_user text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = public, pg_catalog
    AS $$
BEGIN
    IF habitsync_user_erased(p_tenant, p_user) THEN
        RAISE EXCEPTION 'the account was erased' USING ERRCODE = 'HS410';
    END IF;
END
$$;
COMMENT ON FUNCTION habitsync_assert_not_erased(uuid, text) IS 'Raises HS410 when the account was erased (habitsync_user_erased): asked before and after a request takes the user''s lock.';

DROP TRIGGER refuse_erased_user ON users;
CREATE TRIGGER refuse_erased_user BEFORE INSERT ON users FOR EACH ROW EXECUTE FUNCTION habitsync_refuse_erased_user();
COMMENT ON FUNCTION habitsync_refuse_erased_user() IS 'Refuses (SQLSTATE HS410) to create the users row of an erased account; requests that lock an existing row ask habitsync_assert_not_erased before and after the lock.';
