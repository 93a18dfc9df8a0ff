-- habitsync:no-transaction
-- Serves the analysts' "conflicts per day and collection" and the maintenance purge of old
-- conflict-log rows. Built concurrently so that adding it to a live database does not
-- block pushes. Re-runnable: a build interrupted half-way leaves an INVALID index, which
-- the first statement removes.
-- squawk assumes every file runs in a transaction (.squawk.toml); this one does not (marker above).
-- squawk-ignore ban-concurrent-index-creation-in-transaction
DROP INDEX CONCURRENTLY IF EXISTS conflict_log_by_day;
-- squawk-ignore ban-concurrent-index-creation-in-transaction
CREATE INDEX CONCURRENTLY conflict_log_by_day ON conflict_log (tenant_id, logged_at, collection);
