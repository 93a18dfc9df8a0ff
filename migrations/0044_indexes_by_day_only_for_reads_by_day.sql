-- habitsync:no-transaction
-- The indexes by day of migration 0041, again, with a predicate that only the reads by day
-- state. Their predicate was server_version >= 0, which a pull page's server_version > 0
-- (the predicate of daily_progress_pull, migration 0028) implies: a page in version order
-- could choose an index by day, and without statistics it sometimes did, when both looked as
-- cheap, then read and sorted a ten-year user's every day for a page of five (36,500 rows;
-- PlansWithoutStatisticsTests).
--
-- (server_version >= 0) IS TRUE is as true (server_version is NOT NULL and > 0 by a CHECK), but
-- PostgreSQL proves a test IS TRUE only from the same clause, never from a comparison: the
-- reads by day state it as written (PullPageSQL.byDays), nothing else can choose these.
--
-- Built concurrently beside the old ones, which are then dropped, so pushes go on while a
-- large table is indexed. Re-runnable: an interrupted build leaves an INVALID index, which
-- the first statement of each group removes.
-- squawk assumes every file runs in a transaction (.squawk.toml); this one does not (marker above).

-- squawk-ignore ban-concurrent-index-creation-in-transaction
DROP INDEX CONCURRENTLY IF EXISTS daily_progress_by_day_marked;
-- squawk-ignore ban-concurrent-index-creation-in-transaction
CREATE INDEX CONCURRENTLY daily_progress_by_day_marked ON daily_progress (tenant_id, user_id, date) WHERE (server_version >= 0) IS TRUE;
-- squawk-ignore ban-concurrent-index-creation-in-transaction
DROP INDEX CONCURRENTLY IF EXISTS daily_progress_by_day;
-- The index takes back its old name; nothing refers to the temporary one.
-- squawk-ignore renaming-object
ALTER INDEX daily_progress_by_day_marked RENAME TO daily_progress_by_day;
COMMENT ON INDEX daily_progress_by_day IS 'A user''s progress by day: a first sync''s recent days, a windowed device''s digests; partial so that only reads by day can choose it (migrations 0041, 0044).';

-- squawk-ignore ban-concurrent-index-creation-in-transaction
DROP INDEX CONCURRENTLY IF EXISTS xp_transactions_by_time_marked;
-- squawk-ignore ban-concurrent-index-creation-in-transaction
CREATE INDEX CONCURRENTLY xp_transactions_by_time_marked ON xp_transactions (tenant_id, user_id, occurred_at) WHERE (server_version >= 0) IS TRUE;
-- squawk-ignore ban-concurrent-index-creation-in-transaction
DROP INDEX CONCURRENTLY IF EXISTS xp_transactions_by_time;
-- squawk-ignore renaming-object
ALTER INDEX xp_transactions_by_time_marked RENAME TO xp_transactions_by_time;
COMMENT ON INDEX xp_transactions_by_time IS 'A user''s XP by time: a first sync''s recent days, a windowed device''s digests; partial so that only reads by time can choose it (migrations 0041, 0044).';

-- squawk-ignore ban-concurrent-index-creation-in-transaction
DROP INDEX CONCURRENTLY IF EXISTS focus_sessions_by_start_marked;
-- squawk-ignore ban-concurrent-index-creation-in-transaction
CREATE INDEX CONCURRENTLY focus_sessions_by_start_marked ON focus_sessions (tenant_id, user_id, start_time) WHERE (server_version >= 0) IS TRUE;
-- squawk-ignore ban-concurrent-index-creation-in-transaction
DROP INDEX CONCURRENTLY IF EXISTS focus_sessions_by_start;
-- squawk-ignore renaming-object
ALTER INDEX focus_sessions_by_start_marked RENAME TO focus_sessions_by_start;
COMMENT ON INDEX focus_sessions_by_start IS 'A user''s focus sessions by start: a first sync''s recent days, a windowed device''s digests; partial so that only reads by time can choose it (migrations 0041, 0044).';
