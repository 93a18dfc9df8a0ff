-- Issue 46: the triggers that forget a month's streak summary when a day changes (0011, 0014)
-- ran their DELETE through EXECUTE format(…), parsed and planned on every call: every
-- completion of an app-open check-in paid for it. The literals are for Citus, where a statement
-- a trigger runs on a shard is planned as a distributed query that routes on literals only
-- (0014). Where Citus is not loaded (no citus.* settings), the same DELETE is a static
-- statement, whose plan the session keeps.
CREATE OR REPLACE FUNCTION habitsync_progress_months_after_insert_or_delete() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    touched record;
    on_citus boolean := current_setting('citus.shard_count', true) IS NOT NULL;
BEGIN
    FOR touched IN SELECT DISTINCT tenant_id, user_id, date_trunc('month', date)::date AS month FROM changed WHERE deleted_at IS NULL LOOP
        IF on_citus THEN
            EXECUTE format('DELETE FROM derived_streak_months WHERE tenant_id = %L AND user_id = %L AND month = %L',
                           touched.tenant_id, touched.user_id, touched.month);
        ELSE
            DELETE FROM derived_streak_months WHERE tenant_id = touched.tenant_id AND user_id = touched.user_id AND month = touched.month;
        END IF;
    END LOOP;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION habitsync_progress_months_after_update() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    touched record;
    on_citus boolean := current_setting('citus.shard_count', true) IS NOT NULL;
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
        IF on_citus THEN
            EXECUTE format('DELETE FROM derived_streak_months WHERE tenant_id = %L AND user_id = %L AND month = %L',
                           touched.tenant_id, touched.user_id, touched.month);
        ELSE
            DELETE FROM derived_streak_months WHERE tenant_id = touched.tenant_id AND user_id = touched.user_id AND month = touched.month;
        END IF;
    END LOOP;
    RETURN NULL;
END
$$;
