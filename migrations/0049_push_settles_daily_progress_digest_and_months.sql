-- Issue 63: the push keeps daily progress's digest and streak months itself; the triggers that
-- keep them for every other writer step aside while it writes.
--
-- An app-open check-in writes one day. Its statement fired two statement triggers (0026, 0036):
-- one hashed the day's old and new versions into a transaction-local setting for the push's
-- close (0034), the other forgot the streak summary of the day's month. Each is a PL/pgSQL call
-- with three or four statements of its own, about a tenth of PostgreSQL's work per check-in
-- (`scripts/bench --check-in --prices`). The push already knows what they compute: the stored
-- version of each day it writes (read under the user's lock), the new one, and what the day
-- classifier reads of it before and after (ProgressDaySettlement.digestChange, .streakMonths).
--
-- A push on one node, on its fast path, sets habitsync.push_settles_daily_progress for its
-- transaction (SET LOCAL); daily progress's six triggers then do not fire, and the push adds its
-- digest change in its closing statement and deletes the streak months its writes can move
-- before recomputing. Every other writer (psql, imports, maintenance, the push's slow path, a
-- Citus worker) keeps the triggers as before: they stay the backstop.
DROP TRIGGER record_digest_after_insert ON daily_progress;
DROP TRIGGER record_digest_after_update ON daily_progress;
DROP TRIGGER record_digest_after_delete ON daily_progress;
DROP TRIGGER progress_months_after_insert ON daily_progress;
DROP TRIGGER progress_months_after_update ON daily_progress;
DROP TRIGGER progress_months_after_delete ON daily_progress;

SELECT set_config('citus.enable_unsafe_triggers', 'on', true);

CREATE TRIGGER record_digest_after_insert AFTER INSERT ON daily_progress REFERENCING NEW TABLE AS changed FOR EACH STATEMENT
    WHEN (current_setting('habitsync.push_settles_daily_progress', true) IS DISTINCT FROM 'on')
    EXECUTE FUNCTION habitsync_record_digest_after_insert_or_delete('dailyProgress', 'tombstones');
CREATE TRIGGER record_digest_after_update AFTER UPDATE ON daily_progress REFERENCING OLD TABLE AS updated_old NEW TABLE AS updated_new
    FOR EACH STATEMENT
    WHEN (current_setting('habitsync.push_settles_daily_progress', true) IS DISTINCT FROM 'on')
    EXECUTE FUNCTION habitsync_record_digest_after_update('dailyProgress', 'tombstones');
CREATE TRIGGER record_digest_after_delete AFTER DELETE ON daily_progress REFERENCING OLD TABLE AS changed FOR EACH STATEMENT
    WHEN (current_setting('habitsync.push_settles_daily_progress', true) IS DISTINCT FROM 'on')
    EXECUTE FUNCTION habitsync_record_digest_after_insert_or_delete('dailyProgress', 'tombstones');
CREATE TRIGGER progress_months_after_insert AFTER INSERT ON daily_progress REFERENCING NEW TABLE AS changed FOR EACH STATEMENT
    WHEN (current_setting('habitsync.push_settles_daily_progress', true) IS DISTINCT FROM 'on')
    EXECUTE FUNCTION habitsync_progress_months_after_insert_or_delete();
CREATE TRIGGER progress_months_after_update AFTER UPDATE ON daily_progress REFERENCING OLD TABLE AS updated_old NEW TABLE AS updated_new
    FOR EACH STATEMENT
    WHEN (current_setting('habitsync.push_settles_daily_progress', true) IS DISTINCT FROM 'on')
    EXECUTE FUNCTION habitsync_progress_months_after_update();
CREATE TRIGGER progress_months_after_delete AFTER DELETE ON daily_progress REFERENCING OLD TABLE AS changed FOR EACH STATEMENT
    WHEN (current_setting('habitsync.push_settles_daily_progress', true) IS DISTINCT FROM 'on')
    EXECUTE FUNCTION habitsync_progress_months_after_insert_or_delete();
