-- public.data_migrations
-- Data migrations (transforming a user's data, not the schema), tracked per tenant and user like seed 004's MigrationRecord. The legacy import is the first.

CREATE TABLE public.data_migrations (
    -- Owning tenant.
    tenant_id uuid NOT NULL,
    -- Owning user.
    user_id text NOT NULL,
    -- Which data migration (for example legacy_import:<sha256 of the file>).
    name text NOT NULL,
    -- Version of the migration's code that ran.
    version integer DEFAULT 1 NOT NULL,
    -- running, completed or failed.
    status text NOT NULL,
    -- When it started.
    started_at timestamp with time zone DEFAULT now() NOT NULL,
    -- When it finished; NULL while running.
    completed_at timestamp with time zone,
    -- Report: counts, warnings, what was skipped.
    details jsonb DEFAULT '{}'::jsonb NOT NULL
);
ALTER TABLE public.data_migrations ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.data_migrations FORCE ROW LEVEL SECURITY;

-- Constraints
ALTER TABLE public.data_migrations ADD CONSTRAINT data_migrations_completion CHECK (((status = 'running'::text) = (completed_at IS NULL)));
ALTER TABLE public.data_migrations ADD CONSTRAINT data_migrations_name_check CHECK (((char_length(name) >= 1) AND (char_length(name) <= 200)));
ALTER TABLE public.data_migrations ADD CONSTRAINT data_migrations_pkey PRIMARY KEY (tenant_id, user_id, name);
ALTER TABLE public.data_migrations ADD CONSTRAINT data_migrations_status_check CHECK ((status = ANY (ARRAY['running'::text, 'completed'::text, 'failed'::text])));
ALTER TABLE public.data_migrations ADD CONSTRAINT data_migrations_tenant_id_user_id_fkey FOREIGN KEY (tenant_id, user_id) REFERENCES users(tenant_id, user_id) ON DELETE CASCADE;
ALTER TABLE public.data_migrations ADD CONSTRAINT data_migrations_version_check CHECK ((version >= 1));

-- Policies
CREATE POLICY analyst_read ON public.data_migrations AS PERMISSIVE FOR SELECT TO habitsync_analyst
    USING (true);
CREATE POLICY tenant_isolation ON public.data_migrations AS PERMISSIVE FOR ALL TO public
    USING (habitsync_row_visible(tenant_id, user_id))
    WITH CHECK (habitsync_row_visible(tenant_id, user_id));

-- Privileges
GRANT SELECT ON public.data_migrations TO habitsync_analyst;
GRANT DELETE, INSERT, SELECT, UPDATE ON public.data_migrations TO habitsync_app;
