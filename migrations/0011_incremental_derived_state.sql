-- Derived state maintained incrementally (issue 11).
--
-- Every push used to recompute a user's streak and XP from the whole history: every day of
-- every habit since the first start, and the ledger's every row. A five-year user's push cost
-- 13 times a new user's. Two small per-user summaries replace those reads:
--
-- 1. users.xp_ledger_sum, the ledger's running total, kept by triggers on xp_transactions.
-- 2. derived_streak_months, one row per user and closed calendar month: what the global
--    streak needs of that month's days (complete days, runs, breaks). A push reads at most
--    ten years of these rows (about 120) plus the raw days of the current month and of the
--    months its changes touched. Triggers on daily_progress and habits delete the rows a
--    change can affect; the next recompute rebuilds what is missing from the raw days.
-- 3. usage_exit_runs, the user's runs of consecutive days with a conscious exit, kept by a
--    trigger on usage_event_ids: the usage streak is the latest run, one row, where it was a
--    read of every exit day back to the run's start (years, for the app's best users).

ALTER TABLE users ADD COLUMN xp_ledger_sum bigint NOT NULL DEFAULT 0;
COMMENT ON COLUMN users.xp_ledger_sum IS 'Sum of the user''s xp_transactions amounts (before the floor at zero that userProgress.totalXP applies), kept by triggers on xp_transactions so a push never sums the whole ledger.';

-- Backfill past row-level security (forced for the owner too), then restore it.
ALTER TABLE users NO FORCE ROW LEVEL SECURITY;
ALTER TABLE xp_transactions NO FORCE ROW LEVEL SECURITY;
UPDATE users u SET xp_ledger_sum = s.total
FROM (SELECT tenant_id, user_id, sum(amount) AS total FROM xp_transactions GROUP BY tenant_id, user_id) s
WHERE s.tenant_id = u.tenant_id AND s.user_id = u.user_id AND s.total IS NOT NULL;
ALTER TABLE xp_transactions FORCE ROW LEVEL SECURITY;
ALTER TABLE users FORCE ROW LEVEL SECURITY;

-- One function for inserts and deletes: both triggers name their transition table `changed`.
CREATE FUNCTION habitsync_xp_ledger_sum_after_insert_or_delete() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE users u SET xp_ledger_sum = u.xp_ledger_sum + CASE TG_OP WHEN 'DELETE' THEN -d.total ELSE d.total END
    FROM (SELECT tenant_id, user_id, sum(amount) AS total FROM changed GROUP BY tenant_id, user_id) d
    WHERE u.tenant_id = d.tenant_id AND u.user_id = d.user_id AND d.total IS NOT NULL AND d.total <> 0;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION habitsync_xp_ledger_sum_after_insert_or_delete() IS 'Adds inserted, or takes deleted, xp_transactions amounts to or off users.xp_ledger_sum.';

CREATE FUNCTION habitsync_xp_ledger_sum_after_update() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE users u SET xp_ledger_sum = u.xp_ledger_sum + d.delta
    FROM (SELECT tenant_id, user_id, sum(amount) AS delta
          FROM (SELECT tenant_id, user_id, amount FROM updated_new
                UNION ALL SELECT tenant_id, user_id, -amount FROM updated_old) changes
          GROUP BY tenant_id, user_id) d
    WHERE u.tenant_id = d.tenant_id AND u.user_id = d.user_id AND d.delta IS NOT NULL AND d.delta <> 0;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION habitsync_xp_ledger_sum_after_update() IS 'Moves users.xp_ledger_sum by the difference of updated xp_transactions amounts.';

CREATE TRIGGER xp_ledger_sum_after_insert AFTER INSERT ON xp_transactions
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION habitsync_xp_ledger_sum_after_insert_or_delete();
CREATE TRIGGER xp_ledger_sum_after_update AFTER UPDATE ON xp_transactions
    REFERENCING OLD TABLE AS updated_old NEW TABLE AS updated_new FOR EACH STATEMENT EXECUTE FUNCTION habitsync_xp_ledger_sum_after_update();
CREATE TRIGGER xp_ledger_sum_after_delete AFTER DELETE ON xp_transactions
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION habitsync_xp_ledger_sum_after_insert_or_delete();

CREATE TABLE derived_streak_months (
    tenant_id           uuid NOT NULL,
    user_id             text NOT NULL,
    month               date NOT NULL CHECK (extract(day FROM month) = 1),
    daily_completion_xp integer NOT NULL CHECK (daily_completion_xp BETWEEN 0 AND 100000),
    complete_days       integer NOT NULL CHECK (complete_days BETWEEN 0 AND 31),
    last_complete_date  date CHECK (date_trunc('month', last_complete_date)::date = month),
    has_break           boolean NOT NULL,
    leading_run         integer NOT NULL CHECK (leading_run BETWEEN 0 AND complete_days),
    trailing_run        integer NOT NULL CHECK (trailing_run BETWEEN 0 AND complete_days),
    longest_run         integer NOT NULL CHECK (longest_run BETWEEN 0 AND complete_days),
    PRIMARY KEY (tenant_id, user_id, month),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, user_id) ON DELETE CASCADE
);
COMMENT ON TABLE derived_streak_months IS 'Server bookkeeping, not synced: per user and closed calendar month, what the global streak needs of that month''s days, every day taken as past. A missing row is rebuilt from daily_progress by the next recompute; triggers on daily_progress and habits delete the rows their changes can affect. The month''s daily-completion XP awards were reconciled when the row was written.';
COMMENT ON COLUMN derived_streak_months.tenant_id IS 'Owning tenant.';
COMMENT ON COLUMN derived_streak_months.user_id IS 'Owning user.';
COMMENT ON COLUMN derived_streak_months.month IS 'The month''s first day.';
COMMENT ON COLUMN derived_streak_months.daily_completion_xp IS 'The tenant''s XP per complete day when the month''s awards were reconciled; a row written under another setting is rebuilt.';
COMMENT ON COLUMN derived_streak_months.complete_days IS 'Complete days in the month.';
COMMENT ON COLUMN derived_streak_months.last_complete_date IS 'The month''s latest complete day, if any.';
COMMENT ON COLUMN derived_streak_months.has_break IS 'Whether an incomplete day breaks a run inside the month.';
COMMENT ON COLUMN derived_streak_months.leading_run IS 'Complete days before the month''s first incomplete day (all of them without one).';
COMMENT ON COLUMN derived_streak_months.trailing_run IS 'Complete days after the month''s last incomplete day (all of them without one).';
COMMENT ON COLUMN derived_streak_months.longest_run IS 'The longest run of complete days inside the month.';

ALTER TABLE derived_streak_months ENABLE ROW LEVEL SECURITY;
ALTER TABLE derived_streak_months FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON derived_streak_months USING (habitsync_row_visible(tenant_id, user_id)) WITH CHECK (habitsync_row_visible(tenant_id, user_id));
CREATE POLICY analyst_read ON derived_streak_months FOR SELECT TO habitsync_analyst USING (true);
GRANT SELECT, INSERT, UPDATE, DELETE ON derived_streak_months TO habitsync_app;
GRANT SELECT ON derived_streak_months TO habitsync_analyst;

-- What the day classification reads of a progress row: a change of anything else (a note,
-- the timestamps, the LWW key) leaves the summaries as they are. The triggers delete month by
-- month with the primary key, so their cost is that of the months a statement touched (one
-- or two for a push), never a scan of the table. Insert and delete triggers share a function:
-- both name their transition table `changed`.
CREATE FUNCTION habitsync_progress_months_after_insert_or_delete() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    touched record;
BEGIN
    FOR touched IN SELECT DISTINCT tenant_id, user_id, date_trunc('month', date)::date AS month FROM changed WHERE deleted_at IS NULL LOOP
        DELETE FROM derived_streak_months WHERE tenant_id = touched.tenant_id AND user_id = touched.user_id AND month = touched.month;
    END LOOP;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION habitsync_progress_months_after_insert_or_delete() IS 'A live daily_progress row inserted or removed changes its month''s streak summary (tombstones, purged or new, change nothing).';

CREATE FUNCTION habitsync_progress_months_after_update() RETURNS trigger
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
        DELETE FROM derived_streak_months WHERE tenant_id = touched.tenant_id AND user_id = touched.user_id AND month = touched.month;
    END LOOP;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION habitsync_progress_months_after_update() IS 'A daily_progress update that changes what the day classification reads changes the streak summaries of its old and new month.';

CREATE TRIGGER progress_months_after_insert AFTER INSERT ON daily_progress
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION habitsync_progress_months_after_insert_or_delete();
CREATE TRIGGER progress_months_after_update AFTER UPDATE ON daily_progress
    REFERENCING OLD TABLE AS updated_old NEW TABLE AS updated_new FOR EACH STATEMENT EXECUTE FUNCTION habitsync_progress_months_after_update();
CREATE TRIGGER progress_months_after_delete AFTER DELETE ON daily_progress
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION habitsync_progress_months_after_insert_or_delete();

-- A habit's type, schedule, range or deletion changes the classification of every day it
-- spans: its users' summaries are all rebuilt (rare: a schedule edit, not a check-in).
CREATE FUNCTION habitsync_habit_months_after_insert_or_delete() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    touched record;
BEGIN
    FOR touched IN SELECT DISTINCT tenant_id, user_id FROM changed WHERE deleted_at IS NULL LOOP
        DELETE FROM derived_streak_months WHERE tenant_id = touched.tenant_id AND user_id = touched.user_id;
    END LOOP;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION habitsync_habit_months_after_insert_or_delete() IS 'A live habit inserted or removed changes its user''s streak summaries (tombstones, purged or new, change nothing).';

CREATE FUNCTION habitsync_habit_months_after_update() RETURNS trigger
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
        DELETE FROM derived_streak_months WHERE tenant_id = touched.tenant_id AND user_id = touched.user_id;
    END LOOP;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION habitsync_habit_months_after_update() IS 'A habit update that changes its type, schedule, range or deletion changes its user''s streak summaries.';

CREATE TRIGGER habit_months_after_insert AFTER INSERT ON habits
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION habitsync_habit_months_after_insert_or_delete();
CREATE TRIGGER habit_months_after_update AFTER UPDATE ON habits
    REFERENCING OLD TABLE AS updated_old NEW TABLE AS updated_new FOR EACH STATEMENT EXECUTE FUNCTION habitsync_habit_months_after_update();
CREATE TRIGGER habit_months_after_delete AFTER DELETE ON habits
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION habitsync_habit_months_after_insert_or_delete();

-- 3. Runs of exit days, in the user's time zone.
ALTER TABLE users ADD COLUMN exit_runs_zone text;
COMMENT ON COLUMN users.exit_runs_zone IS 'The time zone usage_exit_runs were built in; NULL or another zone than time_zone means they are rebuilt from usage_event_ids by the next recompute.';

CREATE TABLE usage_exit_runs (
    tenant_id uuid NOT NULL,
    user_id   text NOT NULL,
    first_day date NOT NULL,
    last_day  date NOT NULL,
    PRIMARY KEY (tenant_id, user_id, first_day),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, user_id) ON DELETE CASCADE,
    CHECK (first_day <= last_day)
);
CREATE UNIQUE INDEX usage_exit_runs_by_last_day ON usage_exit_runs (tenant_id, user_id, last_day);
COMMENT ON TABLE usage_exit_runs IS 'Server bookkeeping, not synced: a user''s maximal runs of consecutive calendar days (in users.exit_runs_zone) with at least one exit_to_focus usage event. The usage streak is the latest run. Kept by a trigger on usage_event_ids; rebuilt whole when the user''s time zone changes.';
COMMENT ON COLUMN usage_exit_runs.tenant_id IS 'Owning tenant.';
COMMENT ON COLUMN usage_exit_runs.user_id IS 'Owning user.';
COMMENT ON COLUMN usage_exit_runs.first_day IS 'The run''s first day.';
COMMENT ON COLUMN usage_exit_runs.last_day IS 'The run''s last day.';

ALTER TABLE usage_exit_runs ENABLE ROW LEVEL SECURITY;
ALTER TABLE usage_exit_runs FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON usage_exit_runs USING (habitsync_row_visible(tenant_id, user_id)) WITH CHECK (habitsync_row_visible(tenant_id, user_id));
CREATE POLICY analyst_read ON usage_exit_runs FOR SELECT TO habitsync_analyst USING (true);
GRANT SELECT, INSERT, DELETE ON usage_exit_runs TO habitsync_app;
GRANT SELECT ON usage_exit_runs TO habitsync_analyst;

-- New exit days join their neighbours' runs, day by day (a push brings a few).
CREATE FUNCTION habitsync_exit_runs_after_insert() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    exit record;
BEGIN
    FOR exit IN
        SELECT DISTINCT i.tenant_id, i.user_id, (i.occurred_at AT TIME ZONE u.time_zone)::date AS day
        FROM inserted i JOIN users u ON u.tenant_id = i.tenant_id AND u.user_id = i.user_id
        WHERE i.is_exit AND u.exit_runs_zone = u.time_zone
        ORDER BY 1, 2, 3
    LOOP
        CONTINUE WHEN EXISTS (SELECT 1 FROM usage_exit_runs r WHERE r.tenant_id = exit.tenant_id AND r.user_id = exit.user_id
                              AND r.first_day <= exit.day AND r.last_day >= exit.day);
        WITH joined AS (
            DELETE FROM usage_exit_runs r WHERE r.tenant_id = exit.tenant_id AND r.user_id = exit.user_id
                AND (r.last_day = exit.day - 1 OR r.first_day = exit.day + 1)
            RETURNING r.first_day, r.last_day)
        INSERT INTO usage_exit_runs (tenant_id, user_id, first_day, last_day)
        SELECT exit.tenant_id, exit.user_id, least(exit.day, min(first_day)), greatest(exit.day, max(last_day)) FROM joined;
    END LOOP;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION habitsync_exit_runs_after_insert() IS 'Adds new exit_to_focus days to usage_exit_runs, merging adjacent runs, for users whose runs are built in their current time zone.';

-- Forgetting an exit cannot be undone day by day: the user's runs are rebuilt.
CREATE FUNCTION habitsync_exit_runs_after_delete() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE users u SET exit_runs_zone = NULL
    FROM (SELECT DISTINCT tenant_id, user_id FROM deleted WHERE is_exit) d
    WHERE u.tenant_id = d.tenant_id AND u.user_id = d.user_id AND u.exit_runs_zone IS NOT NULL;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION habitsync_exit_runs_after_delete() IS 'Removing an exit marks its user''s usage_exit_runs for a rebuild.';

CREATE TRIGGER exit_runs_after_insert AFTER INSERT ON usage_event_ids
    REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION habitsync_exit_runs_after_insert();
CREATE TRIGGER exit_runs_after_delete AFTER DELETE ON usage_event_ids
    REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION habitsync_exit_runs_after_delete();
