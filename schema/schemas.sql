-- Schemas, extensions, sequences and roles the migrations create

-- Schemas
CREATE SCHEMA IF NOT EXISTS analytics;
COMMENT ON SCHEMA analytics IS 'Stable, documented views for analysts (docs/analytics.md). Each view is security_invoker: row-level security of the caller applies.';
GRANT USAGE ON SCHEMA analytics TO habitsync_analyst;
GRANT USAGE ON SCHEMA analytics TO habitsync_app;
CREATE SCHEMA IF NOT EXISTS archive;
COMMENT ON SCHEMA archive IS 'Detached usage_events partitions older than the retention (maintenance run); read-only history for analysts.';
GRANT USAGE ON SCHEMA archive TO habitsync_analyst;
CREATE SCHEMA IF NOT EXISTS public;
COMMENT ON SCHEMA public IS 'standard public schema';
GRANT USAGE ON SCHEMA public TO PUBLIC;

-- Extensions
CREATE EXTENSION IF NOT EXISTS plpgsql;

-- Sequences
CREATE SEQUENCE public.conflict_log_id_seq AS bigint;
ALTER SEQUENCE public.conflict_log_id_seq OWNED BY conflict_log.id;

-- Roles (cluster-wide; the migrations create them when missing)
CREATE ROLE habitsync_analyst NOLOGIN;
CREATE ROLE habitsync_app NOLOGIN;
