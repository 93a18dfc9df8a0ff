-- public.webhook_deliveries
-- The webhook outbox: one row per push that changed a user's records and endpoint that hears them, written in the push's transaction.

CREATE TABLE public.webhook_deliveries (
    -- The tenant.
    tenant_id uuid NOT NULL,
    -- The user whose records changed.
    user_id text NOT NULL,
    -- The endpoint it goes to.
    endpoint_id uuid NOT NULL,
    -- The push's first server version: a user's deliveries to an endpoint go out in this order, one at a time.
    first_version bigint NOT NULL,
    -- The delivery's id: the webhook-id header, the same on every attempt.
    delivery_id uuid DEFAULT gen_random_uuid() NOT NULL,
    -- What changed: the device, the versions, and each applied change's collection, id and version.
    event jsonb NOT NULL,
    -- pending, delivered (a 2xx answer) or dead (attempts spent, or pending longer than the retention).
    state text DEFAULT 'pending'::text NOT NULL,
    -- Attempts made.
    attempts integer DEFAULT 0 NOT NULL,
    -- When it may be attempted next (pending only).
    next_attempt_at timestamp with time zone DEFAULT now() NOT NULL,
    -- The HTTP status of the last attempt; NULL: none came (refused, timed out, failed).
    last_status integer,
    -- Why the last attempt failed, for the operator (never the answer's body).
    last_error text,
    -- When the push committed it.
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    -- When it was delivered or died.
    finished_at timestamp with time zone
);
ALTER TABLE public.webhook_deliveries ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.webhook_deliveries FORCE ROW LEVEL SECURITY;

-- Constraints
ALTER TABLE public.webhook_deliveries ADD CONSTRAINT webhook_deliveries_attempts_check CHECK ((attempts >= 0));
ALTER TABLE public.webhook_deliveries ADD CONSTRAINT webhook_deliveries_first_version_check CHECK ((first_version > 0));
ALTER TABLE public.webhook_deliveries ADD CONSTRAINT webhook_deliveries_last_error_check CHECK ((octet_length(last_error) <= 300));
ALTER TABLE public.webhook_deliveries ADD CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (tenant_id, user_id, endpoint_id, first_version);
ALTER TABLE public.webhook_deliveries ADD CONSTRAINT webhook_deliveries_state_check CHECK ((state = ANY (ARRAY['pending'::text, 'delivered'::text, 'dead'::text])));
ALTER TABLE public.webhook_deliveries ADD CONSTRAINT webhook_deliveries_tenant_id_endpoint_id_fkey FOREIGN KEY (tenant_id, endpoint_id) REFERENCES webhook_endpoints(tenant_id, endpoint_id) ON DELETE CASCADE;

-- Indexes
CREATE INDEX webhook_deliveries_by_time ON public.webhook_deliveries USING btree (created_at);
CREATE INDEX webhook_deliveries_due_by_endpoint ON public.webhook_deliveries USING btree (tenant_id, endpoint_id, next_attempt_at) WHERE (state = 'pending'::text);
CREATE INDEX webhook_deliveries_finished ON public.webhook_deliveries USING btree (finished_at) WHERE (state <> 'pending'::text);
CREATE INDEX webhook_deliveries_pending ON public.webhook_deliveries USING btree (tenant_id, endpoint_id, user_id, first_version) WHERE (state = 'pending'::text);

-- Policies
CREATE POLICY analyst_read ON public.webhook_deliveries AS PERMISSIVE FOR SELECT TO habitsync_analyst
    USING (true);
CREATE POLICY deliverer ON public.webhook_deliveries AS PERMISSIVE FOR ALL TO public
    USING ((current_setting('habitsync.scope'::text, true) = 'webhooks'::text))
    WITH CHECK ((current_setting('habitsync.scope'::text, true) = 'webhooks'::text));
CREATE POLICY tenant_isolation ON public.webhook_deliveries AS PERMISSIVE FOR ALL TO public
    USING (habitsync_row_visible(tenant_id, user_id))
    WITH CHECK (habitsync_row_visible(tenant_id, user_id));

-- Privileges
GRANT SELECT ON public.webhook_deliveries TO habitsync_analyst;
GRANT DELETE, INSERT, SELECT, UPDATE ON public.webhook_deliveries TO habitsync_app;
