-- public.devices
-- Devices of a user, from the X-Device-Id header.

CREATE TABLE public.devices (
    -- Owning tenant.
    tenant_id uuid NOT NULL,
    -- Owning user.
    user_id text NOT NULL,
    -- X-Device-Id (1–100 chars); also the LWW tie-breaker.
    device_id text NOT NULL,
    -- First request from this device.
    first_seen_at timestamp with time zone DEFAULT now() NOT NULL,
    -- Latest request from this device.
    last_seen_at timestamp with time zone DEFAULT now() NOT NULL,
    -- Latest push.
    last_push_at timestamp with time zone,
    -- Latest pull.
    last_pull_at timestamp with time zone
);
ALTER TABLE public.devices ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.devices FORCE ROW LEVEL SECURITY;

-- Constraints
ALTER TABLE public.devices ADD CONSTRAINT devices_device_id_check CHECK (((char_length(device_id) >= 1) AND (char_length(device_id) <= 100)));
ALTER TABLE public.devices ADD CONSTRAINT devices_pkey PRIMARY KEY (tenant_id, user_id, device_id);
ALTER TABLE public.devices ADD CONSTRAINT devices_tenant_id_user_id_fkey FOREIGN KEY (tenant_id, user_id) REFERENCES users(tenant_id, user_id) ON DELETE CASCADE;

-- Policies
CREATE POLICY analyst_read ON public.devices AS PERMISSIVE FOR SELECT TO habitsync_analyst
    USING (true);
CREATE POLICY tenant_isolation ON public.devices AS PERMISSIVE FOR ALL TO public
    USING (habitsync_row_visible(tenant_id, user_id))
    WITH CHECK (habitsync_row_visible(tenant_id, user_id));

-- Privileges
GRANT SELECT ON public.devices TO habitsync_analyst;
GRANT DELETE, INSERT, SELECT, UPDATE ON public.devices TO habitsync_app;
