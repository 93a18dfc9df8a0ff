-- habitsync:no-transaction
-- Per-key reads of daily_progress that do not depend on when statistics were gathered.
--
-- Without statistics (a young database, a restored one, before autovacuum's first ANALYZE)
-- the planner believes every (tenant_id, user_id) holds less than one row, so any index that
-- starts with those two columns looks as cheap as the one that matches the whole key, and it
-- tended to choose another: a push's lookup of a day by id walked the natural-key or the pull
-- index over the user's every day (36,500 rows, 13 ms, for ten years of ten daily habits). A
-- cached generic plan keeps that choice for the life of the connection.
--
-- Made partial, these two indexes serve only the queries that state their predicate: the
-- natural key a lookup by (habit_id, date), which implies habit_id IS NOT NULL; the pull index
-- a page, which states server_version > 0 (PullStore.pageQuery). A lookup by id then has one
-- index to use, the primary key. Neither predicate changes what the index holds: NULL habit
-- ids (tombstones) were never compared by the unique index, and server_version > 0 is a
-- CHECK of the table.
--
-- Built concurrently beside the old ones, which are then dropped, so pushes go on while a
-- large table is indexed. Re-runnable: an interrupted build leaves an INVALID index, which
-- the first statement of each pair removes. (Between an old index's drop and the rename a
-- push's user lock still keeps one record per habit and day.)
-- squawk assumes every file runs in a transaction (.squawk.toml); this one does not (marker above).

-- squawk-ignore ban-concurrent-index-creation-in-transaction
DROP INDEX CONCURRENTLY IF EXISTS daily_progress_natural_key_partial;
-- squawk-ignore ban-concurrent-index-creation-in-transaction
CREATE UNIQUE INDEX CONCURRENTLY daily_progress_natural_key_partial ON daily_progress (tenant_id, user_id, habit_id, date) WHERE habit_id IS NOT NULL;
-- squawk-ignore ban-concurrent-index-creation-in-transaction
DROP INDEX CONCURRENTLY IF EXISTS daily_progress_natural_key;
-- The index takes back its old name; nothing refers to the temporary one.
-- squawk-ignore renaming-object
ALTER INDEX daily_progress_natural_key_partial RENAME TO daily_progress_natural_key;
COMMENT ON INDEX daily_progress_natural_key IS 'One record per habit and day (the natural key); partial so that a lookup by id cannot choose it (migration 0028).';

-- squawk-ignore ban-concurrent-index-creation-in-transaction
DROP INDEX CONCURRENTLY IF EXISTS daily_progress_pull_partial;
-- squawk-ignore ban-concurrent-index-creation-in-transaction
CREATE UNIQUE INDEX CONCURRENTLY daily_progress_pull_partial ON daily_progress (tenant_id, user_id, server_version) WHERE server_version > 0;
-- squawk-ignore ban-concurrent-index-creation-in-transaction
DROP INDEX CONCURRENTLY IF EXISTS daily_progress_pull;
-- squawk-ignore renaming-object
ALTER INDEX daily_progress_pull_partial RENAME TO daily_progress_pull;
COMMENT ON INDEX daily_progress_pull IS 'Pull pages in version order; partial (every row qualifies) so that only queries stating server_version > 0 can choose it (migration 0028).';
