-- public.global_streaks
-- globalStreak collection (derived): the user's day streak over all habits, recomputed by the server.

CREATE TABLE public.global_streaks (
    -- Owning tenant.
    tenant_id uuid NOT NULL,
    -- Owning user.
    user_id text NOT NULL,
    -- The user's derived_record_id.
    id uuid NOT NULL,
    -- Complete days in the run ending today or yesterday (rest days skipped).
    current_streak integer NOT NULL,
    -- Longest run of complete days, ≥ current_streak.
    longest_streak integer NOT NULL,
    -- Number of complete days ever.
    total_complete_days integer NOT NULL,
    -- Latest complete day; set whenever current_streak > 0.
    last_complete_date date,
    -- The user's calendar day this was computed for.
    computed_for date NOT NULL,
    -- When the server computed it.
    updated_at timestamp(3) with time zone NOT NULL,
    -- Always 'server'.
    updated_by text NOT NULL,
    -- Per-user change number of the latest computation.
    server_version bigint NOT NULL,
    -- Server time of the computation.
    synced_at timestamp with time zone DEFAULT now() NOT NULL,
    -- Always NULL.
    deleted_at timestamp with time zone
);
ALTER TABLE public.global_streaks ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.global_streaks FORCE ROW LEVEL SECURITY;

-- Constraints
ALTER TABLE public.global_streaks ADD CONSTRAINT global_streaks_current_streak_check CHECK ((current_streak >= 0));
ALTER TABLE public.global_streaks ADD CONSTRAINT global_streaks_last_date CHECK (((current_streak = 0) OR (last_complete_date IS NOT NULL)));
ALTER TABLE public.global_streaks ADD CONSTRAINT global_streaks_order CHECK (((longest_streak >= current_streak) AND (total_complete_days >= longest_streak)));
ALTER TABLE public.global_streaks ADD CONSTRAINT global_streaks_pkey PRIMARY KEY (tenant_id, user_id);
ALTER TABLE public.global_streaks ADD CONSTRAINT global_streaks_server_version_check CHECK ((server_version > 0));
ALTER TABLE public.global_streaks ADD CONSTRAINT global_streaks_tenant_id_user_id_fkey FOREIGN KEY (tenant_id, user_id) REFERENCES users(tenant_id, user_id) ON DELETE CASCADE;
ALTER TABLE public.global_streaks ADD CONSTRAINT global_streaks_total_complete_days_check CHECK ((total_complete_days >= 0));
ALTER TABLE public.global_streaks ADD CONSTRAINT global_streaks_updated_by_check CHECK (((char_length(updated_by) >= 1) AND (char_length(updated_by) <= 100)));

-- Indexes
CREATE UNIQUE INDEX global_streaks_pull ON public.global_streaks USING btree (tenant_id, user_id, server_version);

-- Triggers
CREATE TRIGGER record_digest_after_delete AFTER DELETE ON public.global_streaks REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION habitsync_record_digest_after_insert_or_delete('globalStreak', 'live');
CREATE TRIGGER record_digest_after_insert AFTER INSERT ON public.global_streaks REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION habitsync_record_digest_after_insert_or_delete('globalStreak', 'live');
CREATE TRIGGER record_digest_after_update AFTER UPDATE ON public.global_streaks REFERENCING OLD TABLE AS updated_old NEW TABLE AS updated_new FOR EACH STATEMENT EXECUTE FUNCTION habitsync_record_digest_after_update('globalStreak', 'live');

-- Policies
CREATE POLICY analyst_read ON public.global_streaks AS PERMISSIVE FOR SELECT TO habitsync_analyst
    USING (true);
CREATE POLICY tenant_isolation ON public.global_streaks AS PERMISSIVE FOR ALL TO public
    USING (habitsync_row_visible(tenant_id, user_id))
    WITH CHECK (habitsync_row_visible(tenant_id, user_id));

-- Privileges
GRANT SELECT ON public.global_streaks TO habitsync_analyst;
GRANT DELETE, INSERT, SELECT, UPDATE ON public.global_streaks TO habitsync_app;
