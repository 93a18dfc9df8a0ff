-- A day's progress merges as a counter (docs/protocol.md, "Counting"): devices send
-- what they added (`increment`, protocol 2) and the server adds concurrent additions instead
-- of keeping one device's count. progress_count stays the one merged count analysts read; it is
--
--   count_set_value + the sum of the day's additions made after (count_set_at, count_set_by),
--   never below 0
--
-- where the set is the latest absolute value a device sent (a whole-record upsert, or 0 for a
-- delete), compared by the last-writer-wins key. A row with no count_set_at predates this
-- migration: its set is its own progress_count at (updated_at, updated_by), and it has no
-- additions. '-infinity' means the day was created by additions and never set.
ALTER TABLE daily_progress
    ADD COLUMN count_set_value integer CHECK (count_set_value >= 0),
    ADD COLUMN count_set_at timestamptz(3),
    ADD COLUMN count_set_by text CHECK (char_length(count_set_by) <= 100);
COMMENT ON COLUMN daily_progress.count_set_value IS 'The latest absolute count a device set (0 for a delete); NULL on rows older than migration 0023 (then progress_count).';
COMMENT ON COLUMN daily_progress.count_set_at IS 'LWW key of that set, part 1 (''-infinity'': never set, the count is the sum of the additions); NULL: updated_at.';
COMMENT ON COLUMN daily_progress.count_set_by IS 'LWW key of that set, part 2: device id; NULL: updated_by.';
COMMENT ON TABLE daily_progress IS 'dailyProgress collection (DailyProgressModel): one record per habit and calendar day, identified by (habit_id, date). The count merges as a counter (count_set_* and daily_progress_additions); the other fields last-writer-wins.';

-- Additions made after the day's latest set. An addition the set covers (made at or before it)
-- is deleted when the set arrives: it can never count again, since the set only moves later.
-- So the rows per day are those made since its last set, not the day's whole history.
CREATE TABLE daily_progress_additions (
    tenant_id    uuid NOT NULL,
    user_id      text NOT NULL,
    progress_id  uuid NOT NULL,
    made_at      timestamptz(3) NOT NULL,
    made_by      text NOT NULL CHECK (char_length(made_by) BETWEEN 1 AND 100),
    batch_id     uuid NOT NULL,
    change_index integer NOT NULL CHECK (change_index >= 0),
    delta        integer NOT NULL CHECK (delta BETWEEN -1000 AND 1000),
    PRIMARY KEY (tenant_id, user_id, progress_id, made_by, batch_id, change_index),
    FOREIGN KEY (tenant_id, user_id, progress_id) REFERENCES daily_progress (tenant_id, user_id, id) ON DELETE CASCADE
);
COMMENT ON TABLE daily_progress_additions IS 'Increments of a day''s progress made after its latest set (daily_progress.count_set_*), one per pushed change: progress_count = count_set_value + their sum.';
COMMENT ON COLUMN daily_progress_additions.tenant_id IS 'Owning tenant.';
COMMENT ON COLUMN daily_progress_additions.user_id IS 'Owning user.';
COMMENT ON COLUMN daily_progress_additions.progress_id IS 'The day (daily_progress.id, its canonical id).';
COMMENT ON COLUMN daily_progress_additions.made_at IS 'The change''s updatedAt: when the device made the addition (LWW key, part 1).';
COMMENT ON COLUMN daily_progress_additions.made_by IS 'The device that made it (LWW key, part 2).';
COMMENT ON COLUMN daily_progress_additions.batch_id IS 'The push batch that carried it (a batch is applied once).';
COMMENT ON COLUMN daily_progress_additions.change_index IS 'Its change''s index in that batch.';
COMMENT ON COLUMN daily_progress_additions.delta IS 'What it added (negative: took away), -1000…1000.';

ALTER TABLE daily_progress_additions ENABLE ROW LEVEL SECURITY;
ALTER TABLE daily_progress_additions FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON daily_progress_additions USING (habitsync_row_visible(tenant_id, user_id)) WITH CHECK (habitsync_row_visible(tenant_id, user_id));
CREATE POLICY analyst_read ON daily_progress_additions FOR SELECT TO habitsync_analyst USING (true);
GRANT SELECT, INSERT, DELETE ON daily_progress_additions TO habitsync_app;
GRANT SELECT ON daily_progress_additions TO habitsync_analyst;
