-- Habits, reminders, selected apps and user settings merge field by field (docs/protocol.md,
-- "Merging fields"): each field keeps the last-writer-wins key of the write that set it, and a
-- write changes only the fields it carries. The record's own key (updated_at, updated_by) stays
-- the latest key of any write applied to it; field_times holds the keys of the fields whose key
-- is older than that, as {"field": ["2026-11-20T08:15:30.123Z", "device"], …}, or null for a
-- field a new record was not sent (its default, which any write beats). A field it does not name
-- (every field of rows older than this migration) has the record's key.
ALTER TABLE habits ADD COLUMN field_times jsonb CHECK (jsonb_typeof(field_times) = 'object');
ALTER TABLE reminders ADD COLUMN field_times jsonb CHECK (jsonb_typeof(field_times) = 'object');
ALTER TABLE selected_apps ADD COLUMN field_times jsonb CHECK (jsonb_typeof(field_times) = 'object');
ALTER TABLE user_settings ADD COLUMN field_times jsonb CHECK (jsonb_typeof(field_times) = 'object');
COMMENT ON COLUMN habits.field_times IS 'LWW keys of the fields set before the record''s own key: {"field": [time, device]} (null: a default nobody set); a field not named has (updated_at, updated_by). NULL: every field has it.';
COMMENT ON COLUMN reminders.field_times IS 'LWW keys of the fields set before the record''s own key: {"field": [time, device]} (null: a default nobody set); a field not named has (updated_at, updated_by). NULL: every field has it.';
COMMENT ON COLUMN selected_apps.field_times IS 'LWW keys of the fields set before the record''s own key: {"field": [time, device]} (null: a default nobody set); a field not named has (updated_at, updated_by). NULL: every field has it.';
COMMENT ON COLUMN user_settings.field_times IS 'LWW keys of the fields set before the record''s own key: {"field": [time, device]} (null: a default nobody set); a field not named has (updated_at, updated_by). NULL: every field has it.';

-- A field write that lost is logged on its own: which field, the value it carried
-- (incoming_payload {"field": value}) and both keys.
ALTER TABLE conflict_log ADD COLUMN field text CHECK (char_length(field) BETWEEN 1 AND 100);
COMMENT ON COLUMN conflict_log.field IS 'For a field write that lost (records that merge field by field): the field. incoming_payload is then {field: value} and incoming_updated_at/_by the key of the write that lost, which may be an earlier write of another device that this batch replaced. NULL: the whole change lost.';
