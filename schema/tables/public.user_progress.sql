-- public.user_progress
-- userProgress collection (derived): XP total and level from the ledger. Level L starts at 300·(L−1)² XP.

CREATE TABLE public.user_progress (
    -- Owning tenant.
    tenant_id uuid NOT NULL,
    -- Owning user.
    user_id text NOT NULL,
    -- The user's derived_record_id.
    id uuid NOT NULL,
    -- max(0, sum of xp_transactions.amount).
    total_xp bigint NOT NULL,
    -- Level, from 1.
    current_level integer NOT NULL,
    -- XP earned within the current level.
    xp_for_current_level bigint NOT NULL,
    -- XP the current level spans: 300·L² − 300·(L−1)².
    xp_for_next_level bigint NOT NULL,
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
ALTER TABLE public.user_progress ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.user_progress FORCE ROW LEVEL SECURITY;

-- Constraints
ALTER TABLE public.user_progress ADD CONSTRAINT user_progress_current_level_check CHECK ((current_level >= 1));
ALTER TABLE public.user_progress ADD CONSTRAINT user_progress_level_math CHECK (((total_xp >= (((300)::bigint * (current_level - 1)) * (current_level - 1))) AND (total_xp < (((300)::bigint * current_level) * current_level)) AND (xp_for_current_level = (total_xp - (((300)::bigint * (current_level - 1)) * (current_level - 1)))) AND (xp_for_next_level = ((((300)::bigint * current_level) * current_level) - (((300)::bigint * (current_level - 1)) * (current_level - 1))))));
ALTER TABLE public.user_progress ADD CONSTRAINT user_progress_pkey PRIMARY KEY (tenant_id, user_id);
ALTER TABLE public.user_progress ADD CONSTRAINT user_progress_server_version_check CHECK ((server_version > 0));
ALTER TABLE public.user_progress ADD CONSTRAINT user_progress_tenant_id_user_id_fkey FOREIGN KEY (tenant_id, user_id) REFERENCES users(tenant_id, user_id) ON DELETE CASCADE;
ALTER TABLE public.user_progress ADD CONSTRAINT user_progress_total_xp_check CHECK ((total_xp >= 0));
ALTER TABLE public.user_progress ADD CONSTRAINT user_progress_updated_by_check CHECK (((char_length(updated_by) >= 1) AND (char_length(updated_by) <= 100)));
ALTER TABLE public.user_progress ADD CONSTRAINT user_progress_xp_for_current_level_check CHECK ((xp_for_current_level >= 0));
ALTER TABLE public.user_progress ADD CONSTRAINT user_progress_xp_for_next_level_check CHECK ((xp_for_next_level > 0));

-- Indexes
CREATE UNIQUE INDEX user_progress_pull ON public.user_progress USING btree (tenant_id, user_id, server_version);

-- Triggers
CREATE TRIGGER record_digest_after_delete AFTER DELETE ON public.user_progress REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION habitsync_record_digest_after_insert_or_delete('userProgress', 'live');
CREATE TRIGGER record_digest_after_insert AFTER INSERT ON public.user_progress REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION habitsync_record_digest_after_insert_or_delete('userProgress', 'live');
CREATE TRIGGER record_digest_after_update AFTER UPDATE ON public.user_progress REFERENCING OLD TABLE AS updated_old NEW TABLE AS updated_new FOR EACH STATEMENT EXECUTE FUNCTION habitsync_record_digest_after_update('userProgress', 'live');

-- Policies
CREATE POLICY analyst_read ON public.user_progress AS PERMISSIVE FOR SELECT TO habitsync_analyst
    USING (true);
CREATE POLICY tenant_isolation ON public.user_progress AS PERMISSIVE FOR ALL TO public
    USING (habitsync_row_visible(tenant_id, user_id))
    WITH CHECK (habitsync_row_visible(tenant_id, user_id));

-- Privileges
GRANT SELECT ON public.user_progress TO habitsync_analyst;
GRANT DELETE, INSERT, SELECT, UPDATE ON public.user_progress TO habitsync_app;
