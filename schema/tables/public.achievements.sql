-- public.achievements
-- achievements collection: one per user and achievement_id; the earliest unlocked_at wins, the other fields the latest write of each (field_times).

CREATE TABLE public.achievements (
    -- Owning tenant.
    tenant_id uuid NOT NULL,
    -- Owning user.
    user_id text NOT NULL,
    -- Record id of the first unlock the server saw.
    id uuid NOT NULL,
    -- Which achievement (1–100 characters), unique per user.
    achievement_id text,
    -- Display title.
    title text,
    -- Display description, default empty.
    description text,
    -- When it was unlocked; the earliest wins.
    unlocked_at timestamp(3) with time zone,
    -- XP that came with it, ≥ 0.
    xp_awarded integer,
    -- LWW key, part 1.
    updated_at timestamp(3) with time zone NOT NULL,
    -- LWW key, part 2.
    updated_by text NOT NULL,
    -- Per-user change number of the latest write.
    server_version bigint NOT NULL,
    -- Server time the winning write was accepted.
    synced_at timestamp with time zone DEFAULT now() NOT NULL,
    -- Always NULL: achievements are insert-once.
    deleted_at timestamp with time zone,
    -- LWW keys of the fields set before the record's own key: {"field": [time, device]} (null: a default nobody set); a field not named has (updated_at, updated_by). NULL: every field has it.
    field_times jsonb
);
ALTER TABLE public.achievements ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.achievements FORCE ROW LEVEL SECURITY;

-- Constraints
ALTER TABLE public.achievements ADD CONSTRAINT achievements_achievement_id_check CHECK (((char_length(achievement_id) >= 1) AND (char_length(achievement_id) <= 100)));
ALTER TABLE public.achievements ADD CONSTRAINT achievements_description_check CHECK ((char_length(description) <= 2000));
ALTER TABLE public.achievements ADD CONSTRAINT achievements_field_times_check CHECK ((jsonb_typeof(field_times) = 'object'::text));
ALTER TABLE public.achievements ADD CONSTRAINT achievements_live_fields CHECK (((deleted_at IS NOT NULL) OR ((achievement_id IS NOT NULL) AND (title IS NOT NULL) AND (description IS NOT NULL) AND (unlocked_at IS NOT NULL) AND (xp_awarded IS NOT NULL))));
ALTER TABLE public.achievements ADD CONSTRAINT achievements_pkey PRIMARY KEY (tenant_id, user_id, id);
ALTER TABLE public.achievements ADD CONSTRAINT achievements_server_version_check CHECK ((server_version > 0));
ALTER TABLE public.achievements ADD CONSTRAINT achievements_tenant_id_user_id_fkey FOREIGN KEY (tenant_id, user_id) REFERENCES users(tenant_id, user_id) ON DELETE CASCADE;
ALTER TABLE public.achievements ADD CONSTRAINT achievements_title_check CHECK (((char_length(title) >= 1) AND (char_length(title) <= 200)));
ALTER TABLE public.achievements ADD CONSTRAINT achievements_updated_by_check CHECK (((char_length(updated_by) >= 1) AND (char_length(updated_by) <= 100)));
ALTER TABLE public.achievements ADD CONSTRAINT achievements_xp_awarded_check CHECK ((xp_awarded >= 0));

-- Indexes
CREATE UNIQUE INDEX achievements_natural_key ON public.achievements USING btree (tenant_id, user_id, achievement_id);
CREATE UNIQUE INDEX achievements_pull ON public.achievements USING btree (tenant_id, user_id, server_version);

-- Triggers
CREATE TRIGGER record_digest_after_delete AFTER DELETE ON public.achievements REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION habitsync_record_digest_after_insert_or_delete('achievements', 'tombstones');
CREATE TRIGGER record_digest_after_insert AFTER INSERT ON public.achievements REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION habitsync_record_digest_after_insert_or_delete('achievements', 'tombstones');
CREATE TRIGGER record_digest_after_update AFTER UPDATE ON public.achievements REFERENCING OLD TABLE AS updated_old NEW TABLE AS updated_new FOR EACH STATEMENT EXECUTE FUNCTION habitsync_record_digest_after_update('achievements', 'tombstones');

-- Policies
CREATE POLICY analyst_read ON public.achievements AS PERMISSIVE FOR SELECT TO habitsync_analyst
    USING (true);
CREATE POLICY tenant_isolation ON public.achievements AS PERMISSIVE FOR ALL TO public
    USING (habitsync_row_visible(tenant_id, user_id))
    WITH CHECK (habitsync_row_visible(tenant_id, user_id));

-- Privileges
GRANT SELECT ON public.achievements TO habitsync_analyst;
GRANT DELETE, INSERT, SELECT, UPDATE ON public.achievements TO habitsync_app;
