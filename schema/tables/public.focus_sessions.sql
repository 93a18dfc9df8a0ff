-- public.focus_sessions
-- focusSessions collection (FocusSession): focus timer runs. LWW plus a state machine: completed and abandoned are final; one running session per user.

CREATE TABLE public.focus_sessions (
    -- Owning tenant.
    tenant_id uuid NOT NULL,
    -- Owning user.
    user_id text NOT NULL,
    -- Record id.
    id uuid NOT NULL,
    -- When the session started.
    start_time timestamp(3) with time zone,
    -- When it ended; NULL exactly while active or paused, else ≥ start_time.
    end_time timestamp(3) with time zone,
    -- active, paused, completed or abandoned.
    state text,
    -- Focus time in seconds, excluding pauses (0–1500).
    duration double precision,
    -- Time spent paused, in seconds (≥ 0).
    paused_duration double precision,
    -- When the record was created (default start_time).
    created_at timestamp(3) with time zone,
    -- LWW key, part 1.
    updated_at timestamp(3) with time zone NOT NULL,
    -- LWW key, part 2: device id, or 'server' for an auto-abandoned session.
    updated_by text NOT NULL,
    -- Per-user change number of the latest write.
    server_version bigint NOT NULL,
    -- Server time the winning write was accepted.
    synced_at timestamp with time zone DEFAULT now() NOT NULL,
    -- Tombstone.
    deleted_at timestamp with time zone
);
ALTER TABLE public.focus_sessions ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.focus_sessions FORCE ROW LEVEL SECURITY;

-- Constraints
ALTER TABLE public.focus_sessions ADD CONSTRAINT focus_sessions_duration_check CHECK (((duration >= (0)::double precision) AND (duration <= (1500)::double precision)));
ALTER TABLE public.focus_sessions ADD CONSTRAINT focus_sessions_end_time CHECK (((state IS NULL) OR ((state = ANY (ARRAY['active'::text, 'paused'::text])) AND (end_time IS NULL)) OR ((state = ANY (ARRAY['completed'::text, 'abandoned'::text])) AND (end_time IS NOT NULL) AND (end_time >= start_time))));
ALTER TABLE public.focus_sessions ADD CONSTRAINT focus_sessions_live_fields CHECK (((deleted_at IS NOT NULL) OR ((start_time IS NOT NULL) AND (state IS NOT NULL) AND (duration IS NOT NULL) AND (paused_duration IS NOT NULL) AND (created_at IS NOT NULL))));
ALTER TABLE public.focus_sessions ADD CONSTRAINT focus_sessions_paused_duration_check CHECK (((paused_duration >= (0)::double precision) AND (paused_duration < 'Infinity'::double precision)));
ALTER TABLE public.focus_sessions ADD CONSTRAINT focus_sessions_pkey PRIMARY KEY (tenant_id, user_id, id);
ALTER TABLE public.focus_sessions ADD CONSTRAINT focus_sessions_server_version_check CHECK ((server_version > 0));
ALTER TABLE public.focus_sessions ADD CONSTRAINT focus_sessions_state_check CHECK ((state = ANY (ARRAY['active'::text, 'paused'::text, 'completed'::text, 'abandoned'::text])));
ALTER TABLE public.focus_sessions ADD CONSTRAINT focus_sessions_tenant_id_user_id_fkey FOREIGN KEY (tenant_id, user_id) REFERENCES users(tenant_id, user_id) ON DELETE CASCADE;
ALTER TABLE public.focus_sessions ADD CONSTRAINT focus_sessions_updated_by_check CHECK (((char_length(updated_by) >= 1) AND (char_length(updated_by) <= 100)));

-- Indexes
CREATE INDEX focus_sessions_by_start ON public.focus_sessions USING btree (tenant_id, user_id, start_time) WHERE ((server_version >= 0) IS TRUE);
CREATE UNIQUE INDEX focus_sessions_one_running ON public.focus_sessions USING btree (tenant_id, user_id) WHERE ((state = ANY (ARRAY['active'::text, 'paused'::text])) AND (deleted_at IS NULL));
CREATE UNIQUE INDEX focus_sessions_pull ON public.focus_sessions USING btree (tenant_id, user_id, server_version);

-- Triggers
CREATE TRIGGER record_digest_after_delete AFTER DELETE ON public.focus_sessions REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION habitsync_record_digest_after_insert_or_delete('focusSessions', 'tombstones');
CREATE TRIGGER record_digest_after_insert AFTER INSERT ON public.focus_sessions REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION habitsync_record_digest_after_insert_or_delete('focusSessions', 'tombstones');
CREATE TRIGGER record_digest_after_update AFTER UPDATE ON public.focus_sessions REFERENCING OLD TABLE AS updated_old NEW TABLE AS updated_new FOR EACH STATEMENT EXECUTE FUNCTION habitsync_record_digest_after_update('focusSessions', 'tombstones');

-- Policies
CREATE POLICY analyst_read ON public.focus_sessions AS PERMISSIVE FOR SELECT TO habitsync_analyst
    USING (true);
CREATE POLICY tenant_isolation ON public.focus_sessions AS PERMISSIVE FOR ALL TO public
    USING (habitsync_row_visible(tenant_id, user_id))
    WITH CHECK (habitsync_row_visible(tenant_id, user_id));

-- Privileges
GRANT SELECT ON public.focus_sessions TO habitsync_analyst;
GRANT DELETE, INSERT, SELECT, UPDATE ON public.focus_sessions TO habitsync_app;
