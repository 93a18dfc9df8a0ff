-- public.habitsync_schema_migrations
-- Schema migrations applied to this database by habitsync-server (migrate up / serve --migrate auto).

CREATE TABLE public.habitsync_schema_migrations (
    -- Version number, from the file name prefix (0001_… is 1).
    version integer NOT NULL,
    -- Description part of the file name.
    name text NOT NULL,
    -- Hex SHA-256 of the file as applied; an edited file no longer matches and is refused.
    checksum text NOT NULL,
    -- When the migration committed.
    applied_at timestamp with time zone DEFAULT now() NOT NULL,
    -- How long the migration took to run, in milliseconds.
    duration_ms integer DEFAULT 0 NOT NULL,
    -- Database role that applied it.
    applied_by text DEFAULT CURRENT_USER NOT NULL,
    -- applied (ran) or baseline (recorded by migrate baseline without running).
    method text DEFAULT 'applied'::text NOT NULL
);

-- Constraints
ALTER TABLE public.habitsync_schema_migrations ADD CONSTRAINT habitsync_schema_migrations_checksum_check CHECK ((checksum ~ '^[0-9a-f]{64}$'::text));
ALTER TABLE public.habitsync_schema_migrations ADD CONSTRAINT habitsync_schema_migrations_duration_ms_check CHECK ((duration_ms >= 0));
ALTER TABLE public.habitsync_schema_migrations ADD CONSTRAINT habitsync_schema_migrations_method_check CHECK ((method = ANY (ARRAY['applied'::text, 'baseline'::text])));
ALTER TABLE public.habitsync_schema_migrations ADD CONSTRAINT habitsync_schema_migrations_pkey PRIMARY KEY (version);
ALTER TABLE public.habitsync_schema_migrations ADD CONSTRAINT habitsync_schema_migrations_version_check CHECK ((version > 0));

-- Privileges
GRANT SELECT ON public.habitsync_schema_migrations TO habitsync_analyst;
GRANT SELECT ON public.habitsync_schema_migrations TO habitsync_app;
