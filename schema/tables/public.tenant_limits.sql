-- public.tenant_limits
-- Quotas per tenant (tenant set-limits); NULL: no limit of that kind. Every replica enforces them.

CREATE TABLE public.tenant_limits (
    -- The tenant.
    tenant_id uuid NOT NULL,
    -- Pushes per second, all of the tenant's devices together (a token bucket per replica holding the replica's share).
    pushes_per_second integer,
    -- Changes per second in pushes, all devices together (token bucket, as pushes_per_second).
    records_per_second integer,
    -- Changes in pushes per UTC day, all devices and replicas together.
    records_per_day bigint,
    -- Open event streams (GET /v1/sync/events), all users together (each replica its share).
    streams integer,
    -- Stored rows (live records and tombstones of every user); above it, pushes that only delete are still taken.
    storage_rows bigint,
    -- When the limits were last set.
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE public.tenant_limits ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.tenant_limits FORCE ROW LEVEL SECURITY;

-- Constraints
ALTER TABLE public.tenant_limits ADD CONSTRAINT tenant_limits_pkey PRIMARY KEY (tenant_id);
ALTER TABLE public.tenant_limits ADD CONSTRAINT tenant_limits_pushes_per_second_check CHECK (((pushes_per_second >= 1) AND (pushes_per_second <= 1000000)));
ALTER TABLE public.tenant_limits ADD CONSTRAINT tenant_limits_records_per_day_check CHECK (((records_per_day >= 1) AND (records_per_day <= '1000000000000'::bigint)));
ALTER TABLE public.tenant_limits ADD CONSTRAINT tenant_limits_records_per_second_check CHECK (((records_per_second >= 1) AND (records_per_second <= 100000000)));
ALTER TABLE public.tenant_limits ADD CONSTRAINT tenant_limits_storage_rows_check CHECK (((storage_rows >= 1) AND (storage_rows <= '1000000000000'::bigint)));
ALTER TABLE public.tenant_limits ADD CONSTRAINT tenant_limits_streams_check CHECK (((streams >= 1) AND (streams <= 10000000)));
ALTER TABLE public.tenant_limits ADD CONSTRAINT tenant_limits_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES tenants(id) ON DELETE CASCADE;

-- Policies
CREATE POLICY analyst_read ON public.tenant_limits AS PERMISSIVE FOR SELECT TO habitsync_analyst
    USING (true);
CREATE POLICY tenant_isolation ON public.tenant_limits AS PERMISSIVE FOR ALL TO public
    USING ((tenant_id = habitsync_current_tenant_id()))
    WITH CHECK ((tenant_id = habitsync_current_tenant_id()));

-- Privileges
GRANT SELECT ON public.tenant_limits TO habitsync_analyst;
GRANT SELECT ON public.tenant_limits TO habitsync_app;
