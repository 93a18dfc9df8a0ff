-- public.daily_progress
-- dailyProgress collection (DailyProgressModel): one record per habit and calendar day, identified by (habit_id, date). The count merges as a counter (count_set_* and daily_progress_additions); the other fields last-writer-wins.

CREATE TABLE public.daily_progress (
    -- Owning tenant.
    tenant_id uuid NOT NULL,
    -- Owning user.
    user_id text NOT NULL,
    -- Canonical record id: the first id the server saw for this (habit_id, date).
    id uuid NOT NULL,
    -- The habit (same user).
    habit_id uuid,
    -- Calendar day in the user's time zone.
    date date,
    -- Completions (formation) or usage (breaking) that day, ≥ 0.
    progress_count integer,
    -- Snapshot of the habit's goal that day, > 0, so goal changes do not rewrite history.
    goal_count integer,
    -- When each completion was logged (at most 1000).
    timestamps timestamp(3) with time zone[],
    -- Perceived difficulty 1–5, optional.
    difficulty smallint,
    -- Why the day was skipped (medical, travel, equipment, weather, emergency, rest, other); a skipped day is neutral for streaks.
    skip_reason text,
    -- Free-text note on the skip, up to 500 characters.
    skip_note text,
    -- LWW key, part 1.
    updated_at timestamp(3) with time zone NOT NULL,
    -- LWW key, part 2: device id or 'server'.
    updated_by text NOT NULL,
    -- Per-user change number of the latest write.
    server_version bigint NOT NULL,
    -- Server time the winning write was accepted.
    synced_at timestamp with time zone DEFAULT now() NOT NULL,
    -- Tombstone.
    deleted_at timestamp with time zone,
    -- The latest absolute count a device set (0 for a delete); NULL on rows older than migration 0023 (then progress_count).
    count_set_value integer,
    -- LWW key of that set, part 1 ('-infinity': never set, the count is the sum of the additions); NULL: updated_at.
    count_set_at timestamp(3) with time zone,
    -- LWW key of that set, part 2: device id; NULL: updated_by.
    count_set_by text
);
ALTER TABLE public.daily_progress ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.daily_progress FORCE ROW LEVEL SECURITY;

-- Constraints
ALTER TABLE public.daily_progress ADD CONSTRAINT daily_progress_count_set_by_check CHECK ((char_length(count_set_by) <= 100));
ALTER TABLE public.daily_progress ADD CONSTRAINT daily_progress_count_set_value_check CHECK ((count_set_value >= 0));
ALTER TABLE public.daily_progress ADD CONSTRAINT daily_progress_difficulty_check CHECK (((difficulty >= 1) AND (difficulty <= 5)));
ALTER TABLE public.daily_progress ADD CONSTRAINT daily_progress_goal_count_check CHECK ((goal_count > 0));
ALTER TABLE public.daily_progress ADD CONSTRAINT daily_progress_live_fields CHECK (((deleted_at IS NOT NULL) OR ((habit_id IS NOT NULL) AND (date IS NOT NULL) AND (progress_count IS NOT NULL) AND (goal_count IS NOT NULL) AND (timestamps IS NOT NULL))));
ALTER TABLE public.daily_progress ADD CONSTRAINT daily_progress_pkey PRIMARY KEY (tenant_id, user_id, id);
ALTER TABLE public.daily_progress ADD CONSTRAINT daily_progress_progress_count_check CHECK ((progress_count >= 0));
ALTER TABLE public.daily_progress ADD CONSTRAINT daily_progress_server_version_check CHECK ((server_version > 0));
ALTER TABLE public.daily_progress ADD CONSTRAINT daily_progress_skip_note_check CHECK ((char_length(skip_note) <= 500));
ALTER TABLE public.daily_progress ADD CONSTRAINT daily_progress_skip_reason_check CHECK ((skip_reason = ANY (ARRAY['medical'::text, 'travel'::text, 'equipment'::text, 'weather'::text, 'emergency'::text, 'rest'::text, 'other'::text])));
ALTER TABLE public.daily_progress ADD CONSTRAINT daily_progress_tenant_id_user_id_habit_id_fkey FOREIGN KEY (tenant_id, user_id, habit_id) REFERENCES habits(tenant_id, user_id, id);
ALTER TABLE public.daily_progress ADD CONSTRAINT daily_progress_timestamps_check CHECK (((cardinality(timestamps) <= 1000) AND habitsync_no_null_elements(timestamps)));
ALTER TABLE public.daily_progress ADD CONSTRAINT daily_progress_updated_by_check CHECK (((char_length(updated_by) >= 1) AND (char_length(updated_by) <= 100)));

-- Indexes
CREATE INDEX daily_progress_by_day ON public.daily_progress USING btree (tenant_id, user_id, date) WHERE ((server_version >= 0) IS TRUE);
CREATE UNIQUE INDEX daily_progress_natural_key ON public.daily_progress USING btree (tenant_id, user_id, habit_id, date) WHERE (habit_id IS NOT NULL);
CREATE UNIQUE INDEX daily_progress_pull ON public.daily_progress USING btree (tenant_id, user_id, server_version) WHERE (server_version > 0);

-- Triggers
CREATE TRIGGER progress_months_after_delete AFTER DELETE ON public.daily_progress REFERENCING OLD TABLE AS changed FOR EACH STATEMENT WHEN ((current_setting('habitsync.push_settles_daily_progress'::text, true) IS DISTINCT FROM 'on'::text)) EXECUTE FUNCTION habitsync_progress_months_after_insert_or_delete();
CREATE TRIGGER progress_months_after_insert AFTER INSERT ON public.daily_progress REFERENCING NEW TABLE AS changed FOR EACH STATEMENT WHEN ((current_setting('habitsync.push_settles_daily_progress'::text, true) IS DISTINCT FROM 'on'::text)) EXECUTE FUNCTION habitsync_progress_months_after_insert_or_delete();
CREATE TRIGGER progress_months_after_update AFTER UPDATE ON public.daily_progress REFERENCING OLD TABLE AS updated_old NEW TABLE AS updated_new FOR EACH STATEMENT WHEN ((current_setting('habitsync.push_settles_daily_progress'::text, true) IS DISTINCT FROM 'on'::text)) EXECUTE FUNCTION habitsync_progress_months_after_update();
CREATE TRIGGER record_digest_after_delete AFTER DELETE ON public.daily_progress REFERENCING OLD TABLE AS changed FOR EACH STATEMENT WHEN ((current_setting('habitsync.push_settles_daily_progress'::text, true) IS DISTINCT FROM 'on'::text)) EXECUTE FUNCTION habitsync_record_digest_after_insert_or_delete('dailyProgress', 'tombstones');
CREATE TRIGGER record_digest_after_insert AFTER INSERT ON public.daily_progress REFERENCING NEW TABLE AS changed FOR EACH STATEMENT WHEN ((current_setting('habitsync.push_settles_daily_progress'::text, true) IS DISTINCT FROM 'on'::text)) EXECUTE FUNCTION habitsync_record_digest_after_insert_or_delete('dailyProgress', 'tombstones');
CREATE TRIGGER record_digest_after_update AFTER UPDATE ON public.daily_progress REFERENCING OLD TABLE AS updated_old NEW TABLE AS updated_new FOR EACH STATEMENT WHEN ((current_setting('habitsync.push_settles_daily_progress'::text, true) IS DISTINCT FROM 'on'::text)) EXECUTE FUNCTION habitsync_record_digest_after_update('dailyProgress', 'tombstones');

-- Policies
CREATE POLICY analyst_read ON public.daily_progress AS PERMISSIVE FOR SELECT TO habitsync_analyst
    USING (true);
CREATE POLICY tenant_isolation ON public.daily_progress AS PERMISSIVE FOR ALL TO public
    USING (habitsync_row_visible(tenant_id, user_id))
    WITH CHECK (habitsync_row_visible(tenant_id, user_id));

-- Privileges
GRANT SELECT ON public.daily_progress TO habitsync_analyst;
GRANT DELETE, INSERT, SELECT, UPDATE ON public.daily_progress TO habitsync_app;
