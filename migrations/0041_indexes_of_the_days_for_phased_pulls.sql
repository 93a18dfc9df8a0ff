-- habitsync:no-transaction
-- The dated history by its days, for a first sync in phases and a rolling window
-- (docs/protocol.md, "A first sync in phases", "A rolling window"): a first sync's recent phase
-- reads a user's last 35 days of progress, XP and focus sessions, a windowed device's digests
-- the days inside its window. Without these a page read the user's whole history to find
-- them (36,500 progress rows for ten years of ten daily habits); usage events have their
-- index by time already (usage_events_by_time).
--
-- Partial on server_version >= 0 (a CHECK of every table: always true), which only the
-- statements that read by day state (PullPageSQL): a lookup by id or by (habit_id, date)
-- cannot choose them, also without statistics, when every index that starts with
-- (tenant_id, user_id) looks as cheap (migration 0028).
--
-- Built concurrently so pushes go on while a large table is indexed; re-runnable (an
-- interrupted build leaves an INVALID index, which the DROP before each removes).
-- squawk assumes every file runs in a transaction (.squawk.toml); this one does not (marker above).

-- squawk-ignore ban-concurrent-index-creation-in-transaction
DROP INDEX CONCURRENTLY IF EXISTS daily_progress_by_day;
-- squawk-ignore ban-concurrent-index-creation-in-transaction
CREATE INDEX CONCURRENTLY daily_progress_by_day ON daily_progress (tenant_id, user_id, date) WHERE server_version >= 0;
COMMENT ON INDEX daily_progress_by_day IS 'A user''s progress by day: a first sync''s recent days, a windowed device''s digests; partial so that only reads by day can choose it (migration 0041).';

-- squawk-ignore ban-concurrent-index-creation-in-transaction
DROP INDEX CONCURRENTLY IF EXISTS xp_transactions_by_time;
-- squawk-ignore ban-concurrent-index-creation-in-transaction
CREATE INDEX CONCURRENTLY xp_transactions_by_time ON xp_transactions (tenant_id, user_id, occurred_at) WHERE server_version >= 0;
COMMENT ON INDEX xp_transactions_by_time IS 'A user''s XP by time: a first sync''s recent days, a windowed device''s digests; partial so that only reads by time can choose it (migration 0041).';

-- squawk-ignore ban-concurrent-index-creation-in-transaction
DROP INDEX CONCURRENTLY IF EXISTS focus_sessions_by_start;
-- squawk-ignore ban-concurrent-index-creation-in-transaction
CREATE INDEX CONCURRENTLY focus_sessions_by_start ON focus_sessions (tenant_id, user_id, start_time) WHERE server_version >= 0;
COMMENT ON INDEX focus_sessions_by_start IS 'A user''s focus sessions by start: a first sync''s recent days, a windowed device''s digests; partial so that only reads by time can choose it (migration 0041).';
