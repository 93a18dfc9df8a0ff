-- public.tenants
-- Apps or organisations that run their own users. Devices name their tenant in the JWT tid claim.

CREATE TABLE public.tenants (
    -- Tenant id, the JWT tid claim.
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    -- Unique human-readable name, given at tenant create.
    name text NOT NULL,
    -- XP awarded for each complete day (0 turns daily awards off; default 50).
    daily_completion_xp integer DEFAULT 50 NOT NULL,
    -- When the tenant was created.
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    -- When set, the tenant's tokens are refused.
    disabled_at timestamp with time zone
);
ALTER TABLE public.tenants ENABLE ROW LEVEL SECURITY;

-- Constraints
ALTER TABLE public.tenants ADD CONSTRAINT tenants_daily_completion_xp_check CHECK (((daily_completion_xp >= 0) AND (daily_completion_xp <= 100000)));
ALTER TABLE public.tenants ADD CONSTRAINT tenants_name_check CHECK (((char_length(btrim(name)) >= 1) AND (char_length(btrim(name)) <= 200)));
ALTER TABLE public.tenants ADD CONSTRAINT tenants_name_key UNIQUE (name);
ALTER TABLE public.tenants ADD CONSTRAINT tenants_pkey PRIMARY KEY (id);

-- Policies
CREATE POLICY analyst_read ON public.tenants AS PERMISSIVE FOR SELECT TO habitsync_analyst
    USING (true);
CREATE POLICY meter_read ON public.tenants AS PERMISSIVE FOR SELECT TO public
    USING ((current_setting('habitsync.scope'::text, true) = 'meter'::text));
CREATE POLICY tenant_isolation ON public.tenants AS PERMISSIVE FOR ALL TO public
    USING ((id = habitsync_current_tenant_id()))
    WITH CHECK ((id = habitsync_current_tenant_id()));

-- Privileges
GRANT SELECT ON public.tenants TO habitsync_analyst;
GRANT SELECT ON public.tenants TO habitsync_app;
