-- public.usage_streaks
-- usageStreak collection (derived, seed 002 Streak): consecutive days with at least one exit_to_focus event.

CREATE TABLE public.usage_streaks (
    -- Owning tenant.
    tenant_id uuid NOT NULL,
    -- Owning user.
    user_id text NOT NULL,
    -- The user's derived_record_id.
    id uuid NOT NULL,
    -- First day of the current run, or NULL.
    start_date date,
    -- Days in the current run.
    current_day_count integer NOT NULL,
    -- Latest day with a conscious exit, or NULL.
    last_activity_date date,
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
ALTER TABLE public.usage_streaks ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.usage_streaks FORCE ROW LEVEL SECURITY;

-- Constraints
ALTER TABLE public.usage_streaks ADD CONSTRAINT usage_streaks_current_day_count_check CHECK ((current_day_count >= 0));
ALTER TABLE public.usage_streaks ADD CONSTRAINT usage_streaks_dates CHECK (((current_day_count = 0) OR ((start_date IS NOT NULL) AND (last_activity_date IS NOT NULL) AND (start_date <= last_activity_date))));
ALTER TABLE public.usage_streaks ADD CONSTRAINT usage_streaks_pkey PRIMARY KEY (tenant_id, user_id);
ALTER TABLE public.usage_streaks ADD CONSTRAINT usage_streaks_server_version_check CHECK ((server_version > 0));
ALTER TABLE public.usage_streaks ADD CONSTRAINT usage_streaks_tenant_id_user_id_fkey FOREIGN KEY (tenant_id, user_id) REFERENCES users(tenant_id, user_id) ON DELETE CASCADE;
ALTER TABLE public.usage_streaks ADD CONSTRAINT usage_streaks_updated_by_check CHECK (((char_length(updated_by) >= 1) AND (char_length(updated_by) <= 100)));

-- Indexes
CREATE UNIQUE INDEX usage_streaks_pull ON public.usage_streaks USING btree (tenant_id, user_id, server_version);

-- Triggers
CREATE TRIGGER record_digest_after_delete AFTER DELETE ON public.usage_streaks REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION habitsync_record_digest_after_insert_or_delete('usageStreak', 'live');
CREATE TRIGGER record_digest_after_insert AFTER INSERT ON public.usage_streaks REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION habitsync_record_digest_after_insert_or_delete('usageStreak', 'live');
CREATE TRIGGER record_digest_after_update AFTER UPDATE ON public.usage_streaks REFERENCING OLD TABLE AS updated_old NEW TABLE AS updated_new FOR EACH STATEMENT EXECUTE FUNCTION habitsync_record_digest_after_update('usageStreak', 'live');

-- Policies
CREATE POLICY analyst_read ON public.usage_streaks AS PERMISSIVE FOR SELECT TO habitsync_analyst
    USING (true);
CREATE POLICY tenant_isolation ON public.usage_streaks AS PERMISSIVE FOR ALL TO public
    USING (habitsync_row_visible(tenant_id, user_id))
    WITH CHECK (habitsync_row_visible(tenant_id, user_id));

-- Privileges
GRANT SELECT ON public.usage_streaks TO habitsync_analyst;
GRANT DELETE, INSERT, SELECT, UPDATE ON public.usage_streaks TO habitsync_app;
