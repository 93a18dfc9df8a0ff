-- Issue 46: the triggers that forget a month's streak summary when a day changes (0011, 0014)
-- ran their DELETE through EXECUTE format(…), parsed and planned on every call: every
-- completion of an app-open check-in paid for it. The literals are for Citus, where a statement
-- a trigger runs on a shard is planned as a distributed query that routes on literals only
-- (0014). Both triggers now call one function that deletes with a static statement, whose plan
-- the session keeps, where Citus is not loaded, and with the literals where it is. Citus is
-- told by its settings (citus.shard_count exists once the library is loaded on a node): a
-- setting lookup, where a pg_extension read (0021) would be a query per call.
CREATE FUNCTION habitsync_forget_streak_month(p_tenant uuid, p_user text, p_month date) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF current_setting('citus.shard_count', true) IS NOT NULL THEN
        EXECUTE format('DELETE FROM derived_streak_months WHERE tenant_id = %L AND user_id = %L AND month = %L', p_tenant, p_user, p_month);
    ELSE
        DELETE FROM derived_streak_months WHERE tenant_id = p_tenant AND user_id = p_user AND month = p_month;
    END IF;
END
$$;
COMMENT ON FUNCTION habitsync_forget_streak_month(uuid, text, date) IS 'Deletes a user''s streak summary of one month (derived_streak_months), which the next recompute rebuilds from the days.';

CREATE OR REPLACE FUNCTION habitsync_progress_months_after_insert_or_delete() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    touched record;
BEGIN
    FOR touched IN SELECT DISTINCT tenant_id, user_id, date_trunc('month', date)::date AS month FROM changed WHERE deleted_at IS NULL LOOP
        PERFORM habitsync_forget_streak_month(touched.tenant_id, touched.user_id, touched.month);
    END LOOP;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION habitsync_progress_months_after_update() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    touched record;
BEGIN
    FOR touched IN
        WITH changed AS (
            SELECT o.tenant_id, o.user_id, o.date AS old_date, n.date AS new_date
            FROM updated_old o JOIN updated_new n USING (tenant_id, user_id, id)
            WHERE (o.habit_id, o.date, o.progress_count, o.goal_count, o.skip_reason IS NULL, o.deleted_at IS NULL)
                  IS DISTINCT FROM (n.habit_id, n.date, n.progress_count, n.goal_count, n.skip_reason IS NULL, n.deleted_at IS NULL))
        SELECT DISTINCT tenant_id, user_id, date_trunc('month', day)::date AS month
        FROM (SELECT tenant_id, user_id, old_date AS day FROM changed UNION ALL SELECT tenant_id, user_id, new_date FROM changed) d
        WHERE day IS NOT NULL
    LOOP
        PERFORM habitsync_forget_streak_month(touched.tenant_id, touched.user_id, touched.month);
    END LOOP;
    RETURN NULL;
END
$$;
