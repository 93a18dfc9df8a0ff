-- public.tenant_apns
-- A tenant's APNs token-auth key (tenant set-apns): what its devices' background wakes are sent with.

CREATE TABLE public.tenant_apns (
    -- The tenant.
    tenant_id uuid NOT NULL,
    -- The key's id in Apple's developer account (10 characters): the JWT's kid.
    key_id text NOT NULL,
    -- The developer team's id (10 characters): the JWT's iss.
    team_id text NOT NULL,
    -- The app's bundle id: apns-topic.
    topic text NOT NULL,
    -- sandbox (development builds) or production.
    environment text NOT NULL,
    -- The .p8 file: the P-256 private key in PKCS#8 PEM. Never printed; not for analysts.
    signing_key text NOT NULL,
    -- At most one wake per device this often (Apple throttles more).
    wake_interval_seconds integer DEFAULT 60 NOT NULL,
    -- When it was last set.
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE public.tenant_apns ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.tenant_apns FORCE ROW LEVEL SECURITY;

-- Constraints
ALTER TABLE public.tenant_apns ADD CONSTRAINT tenant_apns_environment_check CHECK ((environment = ANY (ARRAY['sandbox'::text, 'production'::text])));
ALTER TABLE public.tenant_apns ADD CONSTRAINT tenant_apns_key_id_check CHECK ((key_id ~ '^[A-Z0-9]{10}$'::text));
ALTER TABLE public.tenant_apns ADD CONSTRAINT tenant_apns_pkey PRIMARY KEY (tenant_id);
ALTER TABLE public.tenant_apns ADD CONSTRAINT tenant_apns_signing_key_check CHECK ((((octet_length(signing_key) >= 100) AND (octet_length(signing_key) <= 4096)) AND (signing_key ~~ '-----BEGIN PRIVATE KEY-----%'::text)));
ALTER TABLE public.tenant_apns ADD CONSTRAINT tenant_apns_team_id_check CHECK ((team_id ~ '^[A-Z0-9]{10}$'::text));
ALTER TABLE public.tenant_apns ADD CONSTRAINT tenant_apns_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES tenants(id) ON DELETE CASCADE;
ALTER TABLE public.tenant_apns ADD CONSTRAINT tenant_apns_topic_check CHECK (((octet_length(topic) <= 255) AND (topic ~ '^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$'::text)));
ALTER TABLE public.tenant_apns ADD CONSTRAINT tenant_apns_wake_interval_seconds_check CHECK (((wake_interval_seconds >= 1) AND (wake_interval_seconds <= 86400)));

-- Policies
CREATE POLICY tenant_isolation ON public.tenant_apns AS PERMISSIVE FOR ALL TO public
    USING ((tenant_id = habitsync_current_tenant_id()))
    WITH CHECK ((tenant_id = habitsync_current_tenant_id()));
CREATE POLICY waker ON public.tenant_apns AS PERMISSIVE FOR SELECT TO public
    USING ((current_setting('habitsync.scope'::text, true) = 'wakes'::text));

-- Privileges
GRANT DELETE, INSERT, SELECT, UPDATE ON public.tenant_apns TO habitsync_app;
