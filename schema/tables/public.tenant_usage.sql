-- public.tenant_usage
-- What each tenant used per UTC day, added by every replica every few seconds (serve --meter-flush) and as it stops.

CREATE TABLE public.tenant_usage (
    -- The tenant.
    tenant_id uuid NOT NULL,
    -- The UTC day.
    day date NOT NULL,
    -- Pushes taken (past the tenant's limits), retries of a stored batch included.
    pushes bigint DEFAULT 0 NOT NULL,
    -- Changes in those pushes: what records_per_day limits.
    changes_received bigint DEFAULT 0 NOT NULL,
    -- Changes stored (result status applied).
    changes_applied bigint DEFAULT 0 NOT NULL,
    -- Pushes refused by a tenant limit (429 tenant_limit_exceeded).
    pushes_refused bigint DEFAULT 0 NOT NULL,
    -- Pull pages served.
    pulls bigint DEFAULT 0 NOT NULL,
    -- Bytes of push bodies (after gzip decoding, if they were sent compressed).
    bytes_in bigint DEFAULT 0 NOT NULL,
    -- Bytes of push and pull response bodies.
    bytes_out bigint DEFAULT 0 NOT NULL,
    -- When a replica last added to the row.
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    -- Users who pushed or pulled that day, each once across every replica.
    active_users bigint DEFAULT 0 NOT NULL,
    -- Devices (a user's X-Device-Id) that pushed or pulled that day, each once.
    active_devices bigint DEFAULT 0 NOT NULL,
    -- The rows the tenant stored (live records and usage events) as last counted that day; NULL: not counted that day. Each replica counts a tenant it serves at most once an hour.
    stored_rows bigint
);
ALTER TABLE public.tenant_usage ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.tenant_usage FORCE ROW LEVEL SECURITY;

-- Constraints
ALTER TABLE public.tenant_usage ADD CONSTRAINT tenant_usage_active_devices_check CHECK ((active_devices >= 0));
ALTER TABLE public.tenant_usage ADD CONSTRAINT tenant_usage_active_users_check CHECK ((active_users >= 0));
ALTER TABLE public.tenant_usage ADD CONSTRAINT tenant_usage_bytes_in_check CHECK ((bytes_in >= 0));
ALTER TABLE public.tenant_usage ADD CONSTRAINT tenant_usage_bytes_out_check CHECK ((bytes_out >= 0));
ALTER TABLE public.tenant_usage ADD CONSTRAINT tenant_usage_changes_applied_check CHECK ((changes_applied >= 0));
ALTER TABLE public.tenant_usage ADD CONSTRAINT tenant_usage_changes_received_check CHECK ((changes_received >= 0));
ALTER TABLE public.tenant_usage ADD CONSTRAINT tenant_usage_pkey PRIMARY KEY (tenant_id, day);
ALTER TABLE public.tenant_usage ADD CONSTRAINT tenant_usage_pulls_check CHECK ((pulls >= 0));
ALTER TABLE public.tenant_usage ADD CONSTRAINT tenant_usage_pushes_check CHECK ((pushes >= 0));
ALTER TABLE public.tenant_usage ADD CONSTRAINT tenant_usage_pushes_refused_check CHECK ((pushes_refused >= 0));
ALTER TABLE public.tenant_usage ADD CONSTRAINT tenant_usage_stored_rows_check CHECK ((stored_rows >= 0));
ALTER TABLE public.tenant_usage ADD CONSTRAINT tenant_usage_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES tenants(id) ON DELETE CASCADE;

-- Policies
CREATE POLICY analyst_read ON public.tenant_usage AS PERMISSIVE FOR SELECT TO habitsync_analyst
    USING (true);
CREATE POLICY meter_write ON public.tenant_usage AS PERMISSIVE FOR ALL TO public
    USING ((current_setting('habitsync.scope'::text, true) = 'meter'::text))
    WITH CHECK ((current_setting('habitsync.scope'::text, true) = 'meter'::text));
CREATE POLICY tenant_read ON public.tenant_usage AS PERMISSIVE FOR SELECT TO public
    USING ((tenant_id = habitsync_current_tenant_id()));

-- Privileges
GRANT SELECT ON public.tenant_usage TO habitsync_analyst;
GRANT INSERT, SELECT, UPDATE ON public.tenant_usage TO habitsync_app;
