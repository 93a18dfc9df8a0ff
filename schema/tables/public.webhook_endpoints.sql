-- public.webhook_endpoints
-- A tenant's webhook endpoints (tenant add-webhook): where its users' changes are delivered, signed with the secret (Standard Webhooks).

CREATE TABLE public.webhook_endpoints (
    -- The tenant.
    tenant_id uuid NOT NULL,
    -- The endpoint.
    endpoint_id uuid DEFAULT gen_random_uuid() NOT NULL,
    -- Where deliveries are POSTed: printable ASCII (a host in punycode, a path percent-encoded), HTTPS; plain HTTP only to loopback, for tests.
    url text NOT NULL,
    -- The collections whose changes it hears; NULL: all.
    collections text[],
    -- Whether a delivery carries the changed records as stored, beside their ids and versions.
    include_records boolean DEFAULT false NOT NULL,
    -- The signing key (24 to 64 bytes; whsec_ and its base64 on the command line). Never printed.
    secret bytea NOT NULL,
    -- Attempts before a delivery is dead.
    max_attempts integer DEFAULT 12 NOT NULL,
    -- Paused: deliveries are still written, and wait (tenant pause-webhook, resume-webhook).
    paused boolean DEFAULT false NOT NULL,
    -- Attempts that failed since the last that succeeded.
    consecutive_failures integer DEFAULT 0 NOT NULL,
    -- After failures, no delivery to it is attempted before this time (backoff for the endpoint as a whole).
    retry_at timestamp with time zone,
    -- When it was added.
    created_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE public.webhook_endpoints ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.webhook_endpoints FORCE ROW LEVEL SECURITY;

-- Constraints
ALTER TABLE public.webhook_endpoints ADD CONSTRAINT webhook_endpoints_collections_check CHECK (((collections IS NULL) OR (((cardinality(collections) >= 1) AND (cardinality(collections) <= 12)) AND (array_position(collections, NULL::text) IS NULL) AND (collections <@ '{habits,reminders,dailyProgress,focusSessions,selectedApps,userSettings,xpTransactions,usageEvents,achievements,globalStreak,userProgress,usageStreak}'::text[]))));
ALTER TABLE public.webhook_endpoints ADD CONSTRAINT webhook_endpoints_consecutive_failures_check CHECK ((consecutive_failures >= 0));
ALTER TABLE public.webhook_endpoints ADD CONSTRAINT webhook_endpoints_max_attempts_check CHECK (((max_attempts >= 1) AND (max_attempts <= 100)));
ALTER TABLE public.webhook_endpoints ADD CONSTRAINT webhook_endpoints_pkey PRIMARY KEY (tenant_id, endpoint_id);
ALTER TABLE public.webhook_endpoints ADD CONSTRAINT webhook_endpoints_secret_check CHECK (((octet_length(secret) >= 24) AND (octet_length(secret) <= 64)));
ALTER TABLE public.webhook_endpoints ADD CONSTRAINT webhook_endpoints_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES tenants(id) ON DELETE CASCADE;
ALTER TABLE public.webhook_endpoints ADD CONSTRAINT webhook_endpoints_url_check CHECK (((octet_length(url) <= 2048) AND (url ~ '^https?://[!-~]+$'::text)));

-- Policies
CREATE POLICY deliverer ON public.webhook_endpoints AS PERMISSIVE FOR ALL TO public
    USING ((current_setting('habitsync.scope'::text, true) = 'webhooks'::text))
    WITH CHECK ((current_setting('habitsync.scope'::text, true) = 'webhooks'::text));
CREATE POLICY tenant_isolation ON public.webhook_endpoints AS PERMISSIVE FOR ALL TO public
    USING ((tenant_id = habitsync_current_tenant_id()))
    WITH CHECK ((tenant_id = habitsync_current_tenant_id()));

-- Privileges
GRANT DELETE, INSERT, SELECT, UPDATE ON public.webhook_endpoints TO habitsync_app;
