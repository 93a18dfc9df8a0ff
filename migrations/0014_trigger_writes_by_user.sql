-- The incremental derived-state triggers (0011, 0012) write other tables one user at a time,
-- with the user's values as literals (EXECUTE format(… %L …)), after reading their transition
-- table on its own. Same results, and the same statements for a push (one user). The reason is
-- Citus (deploy/README.md, "Citus"): there a trigger runs on a shard, and the statements it
-- runs are planned as distributed queries, which cannot read a transition table ("executor
-- could not find named tuplestore") nor take PL/pgSQL variables as parameters ("operator does
-- not exist: text = boolean"). A statement with literals routes to the user's co-located
-- shard. Without Citus nothing changes but a plan per statement (a push runs a few).

CREATE OR REPLACE FUNCTION habitsync_xp_ledger_sum_after_insert_or_delete() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
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
        CONTINUE WHEN touched.total IS NULL OR touched.total = 0;
        EXECUTE format('UPDATE users SET xp_ledger_sum = xp_ledger_sum + %s WHERE tenant_id = %L AND user_id = %L',
                       touched.total, touched.tenant_id, touched.user_id);
    END LOOP;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION habitsync_progress_months_after_insert_or_delete() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    touched record;
BEGIN
    FOR touched IN SELECT DISTINCT tenant_id, user_id, date_trunc('month', date)::date AS month FROM changed WHERE deleted_at IS NULL LOOP
        EXECUTE format('DELETE FROM derived_streak_months WHERE tenant_id = %L AND user_id = %L AND month = %L',
                       touched.tenant_id, touched.user_id, touched.month);
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
        EXECUTE format('DELETE FROM derived_streak_months WHERE tenant_id = %L AND user_id = %L AND month = %L',
                       touched.tenant_id, touched.user_id, touched.month);
    END LOOP;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION habitsync_habit_months_after_insert_or_delete() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    touched record;
BEGIN
    FOR touched IN SELECT DISTINCT tenant_id, user_id FROM changed WHERE deleted_at IS NULL LOOP
        EXECUTE format('DELETE FROM derived_streak_months WHERE tenant_id = %L AND user_id = %L', touched.tenant_id, touched.user_id);
    END LOOP;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION habitsync_habit_months_after_update() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    touched record;
BEGIN
    FOR touched IN
        SELECT DISTINCT n.tenant_id, n.user_id FROM updated_old o JOIN updated_new n USING (tenant_id, user_id, id)
        WHERE (o.habit_type, o.schedule_type, o.schedule_n, o.schedule_weekdays, o.start_date, o.end_date, o.deleted_at IS NULL)
              IS DISTINCT FROM (n.habit_type, n.schedule_type, n.schedule_n, n.schedule_weekdays, n.start_date, n.end_date, n.deleted_at IS NULL)
    LOOP
        EXECUTE format('DELETE FROM derived_streak_months WHERE tenant_id = %L AND user_id = %L', touched.tenant_id, touched.user_id);
    END LOOP;
    RETURN NULL;
END
$$;

-- New exit days join their neighbours' runs, day by day (a push brings a few). The user's
-- zone is read once per user, by key.
CREATE OR REPLACE FUNCTION habitsync_exit_runs_after_insert() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    who record;
    zone text;
    exit_day date;
    covered boolean;
BEGIN
    FOR who IN SELECT DISTINCT tenant_id, user_id FROM inserted WHERE is_exit ORDER BY 1, 2 LOOP
        EXECUTE format('SELECT time_zone FROM users WHERE tenant_id = %L AND user_id = %L AND exit_runs_zone = time_zone',
                       who.tenant_id, who.user_id) INTO zone;
        CONTINUE WHEN zone IS NULL;
        FOR exit_day IN
            SELECT DISTINCT (i.occurred_at AT TIME ZONE zone)::date FROM inserted i
            WHERE i.tenant_id = who.tenant_id AND i.user_id = who.user_id AND i.is_exit ORDER BY 1
        LOOP
            EXECUTE format('SELECT EXISTS (SELECT 1 FROM usage_exit_runs WHERE tenant_id = %L AND user_id = %L AND first_day <= %L AND last_day >= %L)',
                           who.tenant_id, who.user_id, exit_day, exit_day) INTO covered;
            CONTINUE WHEN covered;
            EXECUTE format($sql$
                WITH joined AS (
                    DELETE FROM usage_exit_runs WHERE tenant_id = %1$L AND user_id = %2$L
                        AND (last_day = %3$L::date - 1 OR first_day = %3$L::date + 1)
                    RETURNING first_day, last_day)
                INSERT INTO usage_exit_runs (tenant_id, user_id, first_day, last_day)
                SELECT %1$L, %2$L, least(%3$L::date, min(first_day)), greatest(%3$L::date, max(last_day)) FROM joined
                $sql$, who.tenant_id, who.user_id, exit_day);
        END LOOP;
    END LOOP;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION habitsync_exit_runs_after_delete() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    touched record;
BEGIN
    FOR touched IN SELECT DISTINCT tenant_id, user_id FROM deleted WHERE is_exit LOOP
        EXECUTE format('UPDATE users SET exit_runs_zone = NULL WHERE tenant_id = %L AND user_id = %L AND exit_runs_zone IS NOT NULL',
                       touched.tenant_id, touched.user_id);
    END LOOP;
    RETURN NULL;
END
$$;
