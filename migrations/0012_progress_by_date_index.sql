-- habitsync:no-transaction
-- Serves the incremental recompute's read of a user's live progress in a few date ranges
-- (0011): the natural key (tenant, user, habit, date) cannot, so without this the read
-- scanned the user's whole history. Built concurrently so adding it to a live database does
-- not block pushes; re-runnable (an interrupted build is dropped first).
-- squawk assumes every file runs in a transaction (.squawk.toml); this one does not (marker above).
-- squawk-ignore ban-concurrent-index-creation-in-transaction
DROP INDEX CONCURRENTLY IF EXISTS daily_progress_live_by_date;
-- squawk-ignore ban-concurrent-index-creation-in-transaction
CREATE INDEX CONCURRENTLY daily_progress_live_by_date ON daily_progress (tenant_id, user_id, date) WHERE deleted_at IS NULL;
