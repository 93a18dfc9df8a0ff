-- public.user_settings
-- userSettings collection: one per user (the preferences of seed 002 plus the time zone). Last-writer-wins.

CREATE TABLE public.user_settings (
    -- Owning tenant.
    tenant_id uuid NOT NULL,
    -- Owning user (the natural key).
    user_id text NOT NULL,
    -- Record id on the wire: the user's derived_record_id.
    id uuid NOT NULL,
    -- IANA time zone of the user's calendar days; default UTC.
    timezone text,
    -- Gateway pause length in seconds (15–45, default 30).
    gateway_timer_duration integer,
    -- Self-rated determination from onboarding (1–10, default 5).
    onboarding_determination_level integer,
    -- Interest tags chosen at onboarding.
    selected_interest_tags text[],
    -- First-run experience phase: notStarted, phase1Complete or phase2Complete.
    fre_phase text,
    -- Whether onboarding is done.
    has_completed_onboarding boolean,
    -- LWW key, part 1.
    updated_at timestamp(3) with time zone NOT NULL,
    -- LWW key, part 2.
    updated_by text NOT NULL,
    -- Per-user change number of the latest write.
    server_version bigint NOT NULL,
    -- Server time the winning write was accepted.
    synced_at timestamp with time zone DEFAULT now() NOT NULL,
    -- Tombstone (settings reset to defaults).
    deleted_at timestamp with time zone,
    -- LWW keys of the fields set before the record's own key: {"field": [time, device]} (null: a default nobody set); a field not named has (updated_at, updated_by). NULL: every field has it. {} on a tombstone: no field was ever written (a delete of a record the server had not seen).
    field_times jsonb
);
ALTER TABLE public.user_settings ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.user_settings FORCE ROW LEVEL SECURITY;

-- Constraints
ALTER TABLE public.user_settings ADD CONSTRAINT user_settings_field_times_check CHECK ((jsonb_typeof(field_times) = 'object'::text));
ALTER TABLE public.user_settings ADD CONSTRAINT user_settings_fre_phase_check CHECK ((fre_phase = ANY (ARRAY['notStarted'::text, 'phase1Complete'::text, 'phase2Complete'::text])));
ALTER TABLE public.user_settings ADD CONSTRAINT user_settings_gateway_timer_duration_check CHECK (((gateway_timer_duration >= 15) AND (gateway_timer_duration <= 45)));
ALTER TABLE public.user_settings ADD CONSTRAINT user_settings_live_fields CHECK (((deleted_at IS NOT NULL) OR ((timezone IS NOT NULL) AND (gateway_timer_duration IS NOT NULL) AND (onboarding_determination_level IS NOT NULL) AND (selected_interest_tags IS NOT NULL) AND (fre_phase IS NOT NULL) AND (has_completed_onboarding IS NOT NULL))));
ALTER TABLE public.user_settings ADD CONSTRAINT user_settings_onboarding_determination_level_check CHECK (((onboarding_determination_level >= 1) AND (onboarding_determination_level <= 10)));
ALTER TABLE public.user_settings ADD CONSTRAINT user_settings_pkey PRIMARY KEY (tenant_id, user_id);
ALTER TABLE public.user_settings ADD CONSTRAINT user_settings_selected_interest_tags_check CHECK ((habitsync_no_null_elements(selected_interest_tags) AND (cardinality(selected_interest_tags) <= 100)));
ALTER TABLE public.user_settings ADD CONSTRAINT user_settings_server_version_check CHECK ((server_version > 0));
ALTER TABLE public.user_settings ADD CONSTRAINT user_settings_tenant_id_user_id_fkey FOREIGN KEY (tenant_id, user_id) REFERENCES users(tenant_id, user_id) ON DELETE CASCADE;
ALTER TABLE public.user_settings ADD CONSTRAINT user_settings_timezone_check CHECK ((timezone ~ '^[A-Za-z0-9_+/-]{1,64}$'::text));
ALTER TABLE public.user_settings ADD CONSTRAINT user_settings_updated_by_check CHECK (((char_length(updated_by) >= 1) AND (char_length(updated_by) <= 100)));

-- Indexes
CREATE UNIQUE INDEX user_settings_pull ON public.user_settings USING btree (tenant_id, user_id, server_version);

-- Triggers
CREATE TRIGGER record_digest_after_delete AFTER DELETE ON public.user_settings REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION habitsync_record_digest_after_insert_or_delete('userSettings', 'tombstones');
CREATE TRIGGER record_digest_after_insert AFTER INSERT ON public.user_settings REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION habitsync_record_digest_after_insert_or_delete('userSettings', 'tombstones');
CREATE TRIGGER record_digest_after_update AFTER UPDATE ON public.user_settings REFERENCING OLD TABLE AS updated_old NEW TABLE AS updated_new FOR EACH STATEMENT EXECUTE FUNCTION habitsync_record_digest_after_update('userSettings', 'tombstones');

-- Policies
CREATE POLICY analyst_read ON public.user_settings AS PERMISSIVE FOR SELECT TO habitsync_analyst
    USING (true);
CREATE POLICY tenant_isolation ON public.user_settings AS PERMISSIVE FOR ALL TO public
    USING (habitsync_row_visible(tenant_id, user_id))
    WITH CHECK (habitsync_row_visible(tenant_id, user_id));

-- Privileges
GRANT SELECT ON public.user_settings TO habitsync_analyst;
GRANT DELETE, INSERT, SELECT, UPDATE ON public.user_settings TO habitsync_app;
