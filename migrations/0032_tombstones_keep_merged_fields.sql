-- Issue 44: the merge promises hold in every arrival order, for what is stored.
--
-- 1. A tombstone no field was ever written to (a delete of a record the server had not seen)
--    is marked with field_times '{}': its NULL columns are no fields, not fields set to null
--    at the delete's key (which beat every older write that arrived after the delete, but not
--    one that arrived before it). Such rows are tombstones whose required column is NULL.
UPDATE habits SET field_times = '{}' WHERE deleted_at IS NOT NULL AND field_times IS NULL AND name IS NULL;
UPDATE reminders SET field_times = '{}' WHERE deleted_at IS NOT NULL AND field_times IS NULL AND habit_id IS NULL;
UPDATE selected_apps SET field_times = '{}' WHERE deleted_at IS NOT NULL AND field_times IS NULL AND app_name IS NULL;
UPDATE user_settings SET field_times = '{}' WHERE deleted_at IS NOT NULL AND field_times IS NULL AND timezone IS NULL;

COMMENT ON COLUMN habits.field_times IS 'LWW keys of the fields set before the record''s own key: {"field": [time, device]} (null: a default nobody set); a field not named has (updated_at, updated_by). NULL: every field has it. {} on a tombstone: no field was ever written (a delete of a record the server had not seen).';
COMMENT ON COLUMN reminders.field_times IS 'LWW keys of the fields set before the record''s own key: {"field": [time, device]} (null: a default nobody set); a field not named has (updated_at, updated_by). NULL: every field has it. {} on a tombstone: no field was ever written (a delete of a record the server had not seen).';
COMMENT ON COLUMN selected_apps.field_times IS 'LWW keys of the fields set before the record''s own key: {"field": [time, device]} (null: a default nobody set); a field not named has (updated_at, updated_by). NULL: every field has it. {} on a tombstone: no field was ever written (a delete of a record the server had not seen).';
COMMENT ON COLUMN user_settings.field_times IS 'LWW keys of the fields set before the record''s own key: {"field": [time, device]} (null: a default nobody set); a field not named has (updated_at, updated_by). NULL: every field has it. {} on a tombstone: no field was ever written (a delete of a record the server had not seen).';

-- 2. What the conflict log's field rows hold, as the protocol says it (the old comment spoke of
--    stored writes a batch replaced, which are edits and are not logged).
COMMENT ON COLUMN conflict_log.field IS 'For a field write that lost on arrival to a later write of the field (records that merge field by field): the field. incoming_payload is then {field: value}, incoming_updated_at/_by the key of the write that lost and winning_updated_at/_by that of the write that beat it. A stored value a later write replaces is an edit and is not logged, nor is a write that lost to the same value. NULL: the whole change (rejected, or beaten by a delete, or of a collection not merged by field).';
