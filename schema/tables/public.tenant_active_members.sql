-- public.tenant_active_members
-- Who was active per tenant and UTC day, hashed (habitsync_member_hash): what makes tenant_usage.active_users and active_devices distinct across replicas. Kept two days.

CREATE TABLE public.tenant_active_members (
    -- The UTC day.
    day date NOT NULL,
    -- The tenant.
    tenant_id uuid NOT NULL,
    -- user or device.
    kind text NOT NULL,
    -- habitsync_member_hash of the user, or of the user and device.
    member bytea NOT NULL
);
ALTER TABLE public.tenant_active_members ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.tenant_active_members FORCE ROW LEVEL SECURITY;

-- Constraints
ALTER TABLE public.tenant_active_members ADD CONSTRAINT tenant_active_members_kind_check CHECK ((kind = ANY (ARRAY['user'::text, 'device'::text])));
ALTER TABLE public.tenant_active_members ADD CONSTRAINT tenant_active_members_member_check CHECK ((octet_length(member) = 16));
ALTER TABLE public.tenant_active_members ADD CONSTRAINT tenant_active_members_pkey PRIMARY KEY (day, tenant_id, kind, member);
ALTER TABLE public.tenant_active_members ADD CONSTRAINT tenant_active_members_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES tenants(id) ON DELETE CASCADE;

-- Policies
CREATE POLICY erase_own ON public.tenant_active_members AS PERMISSIVE FOR DELETE TO public
    USING ((tenant_id = habitsync_current_tenant_id()));
CREATE POLICY meter_write ON public.tenant_active_members AS PERMISSIVE FOR ALL TO public
    USING ((current_setting('habitsync.scope'::text, true) = 'meter'::text))
    WITH CHECK ((current_setting('habitsync.scope'::text, true) = 'meter'::text));
CREATE POLICY tenant_read ON public.tenant_active_members AS PERMISSIVE FOR SELECT TO public
    USING ((tenant_id = habitsync_current_tenant_id()));

-- Privileges
GRANT DELETE, INSERT, SELECT ON public.tenant_active_members TO habitsync_app;
