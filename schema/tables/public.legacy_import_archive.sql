-- public.legacy_import_archive
-- Each imported legacy habit object verbatim, so a later importer can run again from the source.

CREATE TABLE public.legacy_import_archive (
    -- Owning tenant.
    tenant_id uuid NOT NULL,
    -- Owning user.
    user_id text NOT NULL,
    -- Hex SHA-256 of the imported file.
    source_sha256 text NOT NULL,
    -- Index of the habit in the file.
    "position" integer NOT NULL,
    -- The habit's id, when it had one.
    habit_id uuid,
    -- The original habit object, as it was in the file.
    source jsonb NOT NULL,
    -- When it was imported.
    imported_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE public.legacy_import_archive ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.legacy_import_archive FORCE ROW LEVEL SECURITY;

-- Constraints
ALTER TABLE public.legacy_import_archive ADD CONSTRAINT legacy_import_archive_pkey PRIMARY KEY (tenant_id, user_id, source_sha256, "position");
ALTER TABLE public.legacy_import_archive ADD CONSTRAINT legacy_import_archive_position_check CHECK (("position" >= 0));
ALTER TABLE public.legacy_import_archive ADD CONSTRAINT legacy_import_archive_source_sha256_check CHECK ((source_sha256 ~ '^[0-9a-f]{64}$'::text));
ALTER TABLE public.legacy_import_archive ADD CONSTRAINT legacy_import_archive_tenant_id_user_id_fkey FOREIGN KEY (tenant_id, user_id) REFERENCES users(tenant_id, user_id) ON DELETE CASCADE;

-- Policies
CREATE POLICY analyst_read ON public.legacy_import_archive AS PERMISSIVE FOR SELECT TO habitsync_analyst
    USING (true);
CREATE POLICY tenant_isolation ON public.legacy_import_archive AS PERMISSIVE FOR ALL TO public
    USING (habitsync_row_visible(tenant_id, user_id))
    WITH CHECK (habitsync_row_visible(tenant_id, user_id));

-- Privileges
GRANT SELECT ON public.legacy_import_archive TO habitsync_analyst;
GRANT DELETE, INSERT, SELECT, UPDATE ON public.legacy_import_archive TO habitsync_app;
