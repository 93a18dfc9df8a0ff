-- habitsync:no-transaction
-- Serves the usage streak's read of recent exits from the id registry (0009): a user's exits
-- since a day, without reading their other events. Built concurrently so that adding it to
-- a live database does not block pushes; re-runnable (an interrupted build is dropped first).
-- squawk assumes every file runs in a transaction (.squawk.toml); this one does not (marker above).
-- squawk-ignore ban-concurrent-index-creation-in-transaction
DROP INDEX CONCURRENTLY IF EXISTS usage_event_ids_exits;
-- squawk-ignore ban-concurrent-index-creation-in-transaction
CREATE INDEX CONCURRENTLY usage_event_ids_exits ON usage_event_ids (tenant_id, user_id, occurred_at) WHERE is_exit;
