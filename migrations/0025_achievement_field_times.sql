-- Achievements merge field by field too (docs/protocol.md, "Merging fields"): one per
-- achievementId, the earliest unlockedAt wins, and title, description and xpAwarded are each
-- the latest write's. field_times as in migration 0024.
ALTER TABLE achievements ADD COLUMN field_times jsonb CHECK (jsonb_typeof(field_times) = 'object');
COMMENT ON COLUMN achievements.field_times IS 'LWW keys of the fields set before the record''s own key: {"field": [time, device]} (null: a default nobody set); a field not named has (updated_at, updated_by). NULL: every field has it.';
COMMENT ON TABLE achievements IS 'achievements collection: one per user and achievement_id; the earliest unlocked_at wins, the other fields the latest write of each (field_times).';
