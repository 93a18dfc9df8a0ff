-- The tables a push inserts into row by row no longer check each row against users.
--
-- A push locks (or creates) the user's row before it writes anything, and holds that lock to
-- its end; an erasure takes the same lock, and habitsync_erase deletes from every table that
-- has tenant_id and user_id, found in the catalog, not through these cascades. So the checks
-- were paid for nothing: one index probe of users and a row lock per inserted row (inserting
-- 50,000 usage_event_ids rows took 1.25-1.47 s with the check, 0.52-1.04 s without). Kept elsewhere:
-- tables written once per user or rarely, where the check costs nothing that matters, and
-- daily_progress's foreign key to its habit, which is about the habit, not the user.
-- The erasure test (AccountLifecycleTests) checks that every row of every such table goes.

-- Nothing relies on them (above); the ban guards against dropping a guarantee unawares.
-- squawk-ignore ban-drop-constraint
ALTER TABLE usage_events DROP CONSTRAINT usage_events_tenant_id_user_id_fkey;
-- squawk-ignore ban-drop-constraint
ALTER TABLE usage_event_ids DROP CONSTRAINT usage_event_ids_tenant_id_user_id_fkey;
-- squawk-ignore ban-drop-constraint
ALTER TABLE daily_progress DROP CONSTRAINT daily_progress_tenant_id_user_id_fkey;
-- squawk-ignore ban-drop-constraint
ALTER TABLE xp_transactions DROP CONSTRAINT xp_transactions_tenant_id_user_id_fkey;
