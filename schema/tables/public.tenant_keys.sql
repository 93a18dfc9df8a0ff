-- public.tenant_keys
-- JWT verification keys per tenant. Secret: never readable by analysts.

CREATE TABLE public.tenant_keys (
    -- Owning tenant.
    tenant_id uuid NOT NULL,
    -- Key id (JWT kid header, optional).
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    -- HS256 (shared secret), ES256 or RS256 (public key). A token must use exactly this algorithm.
    algorithm text NOT NULL,
    -- HS256 shared secret, at least 32 bytes. Secret.
    hs256_secret bytea,
    -- ES256/RS256 public key, PEM.
    public_key_pem text,
    -- When the key was added.
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    -- When rotate-key replaced it; retired keys verify no token.
    retired_at timestamp with time zone
);
ALTER TABLE public.tenant_keys ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.tenant_keys FORCE ROW LEVEL SECURITY;

-- Constraints
ALTER TABLE public.tenant_keys ADD CONSTRAINT tenant_keys_algorithm_check CHECK ((algorithm = ANY (ARRAY['HS256'::text, 'ES256'::text, 'RS256'::text])));
ALTER TABLE public.tenant_keys ADD CONSTRAINT tenant_keys_material CHECK ((((algorithm = 'HS256'::text) AND (hs256_secret IS NOT NULL) AND (octet_length(hs256_secret) >= 32) AND (public_key_pem IS NULL)) OR ((algorithm = ANY (ARRAY['ES256'::text, 'RS256'::text])) AND (hs256_secret IS NULL) AND (public_key_pem ~~ '-----BEGIN %'::text))));
ALTER TABLE public.tenant_keys ADD CONSTRAINT tenant_keys_pkey PRIMARY KEY (tenant_id, id);
ALTER TABLE public.tenant_keys ADD CONSTRAINT tenant_keys_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES tenants(id) ON DELETE CASCADE;

-- Policies
CREATE POLICY tenant_isolation ON public.tenant_keys AS PERMISSIVE FOR ALL TO public
    USING ((tenant_id = habitsync_current_tenant_id()))
    WITH CHECK ((tenant_id = habitsync_current_tenant_id()));

-- Privileges
GRANT SELECT ON public.tenant_keys TO habitsync_app;
