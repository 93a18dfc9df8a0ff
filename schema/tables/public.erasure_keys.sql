-- public.erasure_keys
-- The secret key per tenant that erased_users markers are hashed with. Readable by the tables' owner only.

CREATE TABLE public.erasure_keys (
    -- Owning tenant.
    tenant_id uuid NOT NULL,
    -- 32 random bytes.
    key bytea DEFAULT (uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid())) NOT NULL,
    -- When the key was made (at the tenant's first erasure).
    created_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE public.erasure_keys ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.erasure_keys FORCE ROW LEVEL SECURITY;

-- Constraints
ALTER TABLE public.erasure_keys ADD CONSTRAINT erasure_keys_key_check CHECK ((octet_length(key) = 32));
ALTER TABLE public.erasure_keys ADD CONSTRAINT erasure_keys_pkey PRIMARY KEY (tenant_id);
ALTER TABLE public.erasure_keys ADD CONSTRAINT erasure_keys_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES tenants(id) ON DELETE CASCADE;

-- Policies
CREATE POLICY tenant_isolation ON public.erasure_keys AS PERMISSIVE FOR ALL TO public
    USING ((tenant_id = habitsync_current_tenant_id()))
    WITH CHECK ((tenant_id = habitsync_current_tenant_id()));
