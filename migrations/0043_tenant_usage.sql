-- Per-tenant metering (docs/analytics.md, "Tenant usage"): what each tenant's devices used of
-- the server, per UTC day. Each replica counts in memory and adds its counts here every few
-- seconds in one statement (never a statement per request), and once more as it stops; the
-- daily records limit (tenant_limits.records_per_day) is checked against changes_received.

CREATE TABLE tenant_usage (
    tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    day date NOT NULL,
    pushes bigint NOT NULL DEFAULT 0 CHECK (pushes >= 0),
    changes_received bigint NOT NULL DEFAULT 0 CHECK (changes_received >= 0),
    changes_applied bigint NOT NULL DEFAULT 0 CHECK (changes_applied >= 0),
    pushes_refused bigint NOT NULL DEFAULT 0 CHECK (pushes_refused >= 0),
    pulls bigint NOT NULL DEFAULT 0 CHECK (pulls >= 0),
    bytes_in bigint NOT NULL DEFAULT 0 CHECK (bytes_in >= 0),
    bytes_out bigint NOT NULL DEFAULT 0 CHECK (bytes_out >= 0),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, day)
);
COMMENT ON TABLE tenant_usage IS 'What each tenant used per UTC day, added by every replica every few seconds (serve --meter-flush) and as it stops.';
COMMENT ON COLUMN tenant_usage.tenant_id IS 'The tenant.';
COMMENT ON COLUMN tenant_usage.day IS 'The UTC day.';
COMMENT ON COLUMN tenant_usage.pushes IS 'Pushes taken (past the tenant''s limits), retries of a stored batch included.';
COMMENT ON COLUMN tenant_usage.changes_received IS 'Changes in those pushes: what records_per_day limits.';
COMMENT ON COLUMN tenant_usage.changes_applied IS 'Changes stored (result status applied).';
COMMENT ON COLUMN tenant_usage.pushes_refused IS 'Pushes refused by a tenant limit (429 tenant_limit_exceeded).';
COMMENT ON COLUMN tenant_usage.pulls IS 'Pull pages served.';
COMMENT ON COLUMN tenant_usage.bytes_in IS 'Bytes of push bodies (after gzip decoding, if they were sent compressed).';
COMMENT ON COLUMN tenant_usage.bytes_out IS 'Bytes of push and pull response bodies.';
COMMENT ON COLUMN tenant_usage.updated_at IS 'When a replica last added to the row.';

ALTER TABLE tenant_usage ENABLE ROW LEVEL SECURITY;
ALTER TABLE tenant_usage FORCE ROW LEVEL SECURITY;
-- A replica adds every tenant's counts in one statement, in a transaction that says so.
CREATE POLICY meter_write ON tenant_usage
    USING (current_setting('habitsync.scope', true) = 'meter') WITH CHECK (current_setting('habitsync.scope', true) = 'meter');
CREATE POLICY tenant_read ON tenant_usage FOR SELECT USING (tenant_id = habitsync_current_tenant_id());
CREATE POLICY analyst_read ON tenant_usage FOR SELECT TO habitsync_analyst USING (true);
GRANT SELECT, INSERT, UPDATE ON tenant_usage TO habitsync_app;
-- The flush adds only the rows of tenants that still exist: counts of a tenant erased since
-- they were made are dropped, not kept failing the others' (the foreign key).
CREATE POLICY meter_read ON tenants FOR SELECT USING (current_setting('habitsync.scope', true) = 'meter');
GRANT SELECT ON tenant_usage TO habitsync_analyst;

-- A reference table on Citus, as tenants (its rows go with the tenant's).
CREATE OR REPLACE FUNCTION habitsync_reference_tables() RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN '{tenants,tenant_keys,tenant_issuers,tenant_limits,tenant_usage,erasure_keys,erased_users,sync_epoch}'::text[];
COMMENT ON FUNCTION habitsync_reference_tables() IS 'Tables that are reference tables on Citus (copied to every node): tenants, their keys, issuers, limits and usage, erasure keys and markers, sync_epoch.';

DO $$
BEGIN
    -- Nested: PL/pgSQL plans the inner test (pg_dist_partition) only where Citus is.
    IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
        IF EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = 'users'::regclass) THEN
            PERFORM create_reference_table('tenant_usage');
        END IF;
    END IF;
END
$$;
