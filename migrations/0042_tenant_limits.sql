-- Per-tenant quotas (docs/operations.md, "Tenant quotas"): what one tenant's devices may use of
-- a server that hosts several apps. Set with `habitsync-server tenant set-limits`, read by every
-- replica (cached briefly), so each enforces the same numbers. No row, or NULL in a column: no
-- limit of that kind.

CREATE TABLE tenant_limits (
    tenant_id uuid PRIMARY KEY REFERENCES tenants (id) ON DELETE CASCADE,
    pushes_per_second integer CHECK (pushes_per_second BETWEEN 1 AND 1000000),
    records_per_second integer CHECK (records_per_second BETWEEN 1 AND 100000000),
    records_per_day bigint CHECK (records_per_day BETWEEN 1 AND 1000000000000),
    streams integer CHECK (streams BETWEEN 1 AND 10000000),
    storage_rows bigint CHECK (storage_rows BETWEEN 1 AND 1000000000000),
    updated_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE tenant_limits IS 'Quotas per tenant (tenant set-limits); NULL: no limit of that kind. Every replica enforces them.';
COMMENT ON COLUMN tenant_limits.tenant_id IS 'The tenant.';
COMMENT ON COLUMN tenant_limits.pushes_per_second IS 'Pushes per second, all of the tenant''s devices together (a token bucket per replica holding the replica''s share).';
COMMENT ON COLUMN tenant_limits.records_per_second IS 'Changes per second in pushes, all devices together (token bucket, as pushes_per_second).';
COMMENT ON COLUMN tenant_limits.records_per_day IS 'Changes in pushes per UTC day, all devices and replicas together.';
COMMENT ON COLUMN tenant_limits.streams IS 'Open event streams (GET /v1/sync/events), all users together (each replica its share).';
COMMENT ON COLUMN tenant_limits.storage_rows IS 'Stored rows (live records and tombstones of every user); above it, pushes that only delete are still taken.';
COMMENT ON COLUMN tenant_limits.updated_at IS 'When the limits were last set.';

ALTER TABLE tenant_limits ENABLE ROW LEVEL SECURITY;
ALTER TABLE tenant_limits FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON tenant_limits USING (tenant_id = habitsync_current_tenant_id()) WITH CHECK (tenant_id = habitsync_current_tenant_id());
GRANT SELECT ON tenant_limits TO habitsync_app;
-- Analysts read every tenant's limits beside its usage.
CREATE POLICY analyst_read ON tenant_limits FOR SELECT TO habitsync_analyst USING (true);
GRANT SELECT ON tenant_limits TO habitsync_analyst;

-- A reference table on Citus, as tenants: the list of 0027 with it.
CREATE OR REPLACE FUNCTION habitsync_reference_tables() RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN '{tenants,tenant_keys,tenant_issuers,tenant_limits,erasure_keys,erased_users,sync_epoch}'::text[];
COMMENT ON FUNCTION habitsync_reference_tables() IS 'Tables that are reference tables on Citus (copied to every node): tenants, their keys, issuers and limits, erasure keys and markers, sync_epoch.';

DO $$
BEGIN
    -- Nested: PL/pgSQL plans the inner test (pg_dist_partition) only where Citus is.
    IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
        IF EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = 'users'::regclass) THEN
            PERFORM create_reference_table('tenant_limits');
        END IF;
    END IF;
END
$$;
