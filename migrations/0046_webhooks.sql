-- Webhooks (docs/operations.md, "Webhooks"): a tenant's endpoints hear of every push that
-- changed a user's records. A push writes one delivery per matching endpoint in its own
-- transaction (a transactional outbox: a change that committed is delivered at least once, one
-- that rolled back never is); every replica's deliverer sends them, each user's in order, and
-- retries with backoff until the endpoint's attempts are spent (then the delivery is dead, kept
-- for `tenant redeliver`).

CREATE TABLE webhook_endpoints (
    tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    endpoint_id uuid NOT NULL DEFAULT gen_random_uuid(),
    url text NOT NULL CHECK (octet_length(url) <= 2048 AND url ~ '^https?://[!-~]+$'),
    collections text[] CHECK (collections IS NULL OR (cardinality(collections) BETWEEN 1 AND 12 AND array_position(collections, NULL) IS NULL
        AND collections <@ '{habits,reminders,dailyProgress,focusSessions,selectedApps,userSettings,xpTransactions,usageEvents,achievements,globalStreak,userProgress,usageStreak}'::text[])),
    include_records boolean NOT NULL DEFAULT false,
    secret bytea NOT NULL CHECK (octet_length(secret) BETWEEN 24 AND 64),
    max_attempts integer NOT NULL DEFAULT 12 CHECK (max_attempts BETWEEN 1 AND 100),
    paused boolean NOT NULL DEFAULT false,
    consecutive_failures integer NOT NULL DEFAULT 0 CHECK (consecutive_failures >= 0),
    retry_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, endpoint_id)
);
COMMENT ON TABLE webhook_endpoints IS 'A tenant''s webhook endpoints (tenant add-webhook): where its users'' changes are delivered, signed with the secret (Standard Webhooks).';
COMMENT ON COLUMN webhook_endpoints.tenant_id IS 'The tenant.';
COMMENT ON COLUMN webhook_endpoints.endpoint_id IS 'The endpoint.';
COMMENT ON COLUMN webhook_endpoints.url IS 'Where deliveries are POSTed: printable ASCII (a host in punycode, a path percent-encoded), HTTPS; plain HTTP only to loopback, for tests.';
COMMENT ON COLUMN webhook_endpoints.collections IS 'The collections whose changes it hears; NULL: all.';
COMMENT ON COLUMN webhook_endpoints.include_records IS 'Whether a delivery carries the changed records as stored, beside their ids and versions.';
COMMENT ON COLUMN webhook_endpoints.secret IS 'The signing key (24 to 64 bytes; whsec_ and its base64 on the command line). Never printed.';
COMMENT ON COLUMN webhook_endpoints.max_attempts IS 'Attempts before a delivery is dead.';
COMMENT ON COLUMN webhook_endpoints.paused IS 'Paused: deliveries are still written, and wait (tenant pause-webhook, resume-webhook).';
COMMENT ON COLUMN webhook_endpoints.consecutive_failures IS 'Attempts that failed since the last that succeeded.';
COMMENT ON COLUMN webhook_endpoints.retry_at IS 'After failures, no delivery to it is attempted before this time (backoff for the endpoint as a whole).';
COMMENT ON COLUMN webhook_endpoints.created_at IS 'When it was added.';

ALTER TABLE webhook_endpoints ENABLE ROW LEVEL SECURITY;
ALTER TABLE webhook_endpoints FORCE ROW LEVEL SECURITY;
-- Admins (tenant scope) manage their tenant's; a push (user scope) reads its tenant's to write
-- the deliveries; the deliverer (scope webhooks) reads and updates every tenant's.
CREATE POLICY tenant_isolation ON webhook_endpoints USING (tenant_id = habitsync_current_tenant_id()) WITH CHECK (tenant_id = habitsync_current_tenant_id());
CREATE POLICY deliverer ON webhook_endpoints
    USING (current_setting('habitsync.scope', true) = 'webhooks') WITH CHECK (current_setting('habitsync.scope', true) = 'webhooks');
GRANT SELECT, INSERT, UPDATE, DELETE ON webhook_endpoints TO habitsync_app;

CREATE TABLE webhook_deliveries (
    tenant_id uuid NOT NULL,
    user_id text NOT NULL,
    endpoint_id uuid NOT NULL,
    -- The push's first server version: each user's deliveries go out in this order.
    first_version bigint NOT NULL CHECK (first_version > 0),
    delivery_id uuid NOT NULL DEFAULT gen_random_uuid(),
    event jsonb NOT NULL,
    state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'dead')),
    attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    last_status integer,
    last_error text CHECK (octet_length(last_error) <= 300),
    created_at timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz,
    PRIMARY KEY (tenant_id, user_id, endpoint_id, first_version),
    FOREIGN KEY (tenant_id, endpoint_id) REFERENCES webhook_endpoints (tenant_id, endpoint_id) ON DELETE CASCADE
);
COMMENT ON TABLE webhook_deliveries IS 'The webhook outbox: one row per push that changed a user''s records and endpoint that hears them, written in the push''s transaction.';
COMMENT ON COLUMN webhook_deliveries.tenant_id IS 'The tenant.';
COMMENT ON COLUMN webhook_deliveries.user_id IS 'The user whose records changed.';
COMMENT ON COLUMN webhook_deliveries.endpoint_id IS 'The endpoint it goes to.';
COMMENT ON COLUMN webhook_deliveries.first_version IS 'The push''s first server version: a user''s deliveries to an endpoint go out in this order, one at a time.';
COMMENT ON COLUMN webhook_deliveries.delivery_id IS 'The delivery''s id: the webhook-id header, the same on every attempt.';
COMMENT ON COLUMN webhook_deliveries.event IS 'What changed: the device, the versions, and each applied change''s collection, id and version.';
COMMENT ON COLUMN webhook_deliveries.state IS 'pending, delivered (a 2xx answer) or dead (attempts spent, or pending longer than the retention).';
COMMENT ON COLUMN webhook_deliveries.attempts IS 'Attempts made.';
COMMENT ON COLUMN webhook_deliveries.next_attempt_at IS 'When it may be attempted next (pending only).';
COMMENT ON COLUMN webhook_deliveries.last_status IS 'The HTTP status of the last attempt; NULL: none came (refused, timed out, failed).';
COMMENT ON COLUMN webhook_deliveries.last_error IS 'Why the last attempt failed, for the operator (never the answer''s body).';
COMMENT ON COLUMN webhook_deliveries.created_at IS 'When the push committed it.';
COMMENT ON COLUMN webhook_deliveries.finished_at IS 'When it was delivered or died.';

-- Each user's next delivery to each endpoint, and what is due.
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (tenant_id, endpoint_id, user_id, first_version) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
-- The operator's listing and the retention, by age; the pruning of finished ones.
CREATE INDEX webhook_deliveries_by_time ON webhook_deliveries (created_at);
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (finished_at) WHERE state <> 'pending';

ALTER TABLE webhook_deliveries ENABLE ROW LEVEL SECURITY;
ALTER TABLE webhook_deliveries FORCE ROW LEVEL SECURITY;
-- A push writes its user's (and an erasure deletes them); admins list and redeliver their
-- tenant's; the deliverer reads and updates every tenant's.
CREATE POLICY tenant_isolation ON webhook_deliveries USING (habitsync_row_visible(tenant_id, user_id)) WITH CHECK (habitsync_row_visible(tenant_id, user_id));
CREATE POLICY deliverer ON webhook_deliveries
    USING (current_setting('habitsync.scope', true) = 'webhooks') WITH CHECK (current_setting('habitsync.scope', true) = 'webhooks');
GRANT SELECT, INSERT, UPDATE, DELETE ON webhook_deliveries TO habitsync_app;
GRANT SELECT ON webhook_deliveries TO habitsync_analyst;
CREATE POLICY analyst_read ON webhook_deliveries FOR SELECT TO habitsync_analyst USING (true);

-- On Citus webhook_endpoints is a reference table (as the tenant's other settings) and
-- webhook_deliveries is distributed with users (habitsync_distribute finds it by its
-- tenant_id and user_id). Webhooks are not delivered on Citus yet (deploy/README.md).
CREATE OR REPLACE FUNCTION habitsync_reference_tables() RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN '{tenants,tenant_keys,tenant_issuers,tenant_limits,tenant_usage,tenant_active_members,webhook_endpoints,erasure_keys,erased_users,sync_epoch}'::text[];
COMMENT ON FUNCTION habitsync_reference_tables() IS 'Tables that are reference tables on Citus (copied to every node): tenants, their keys, issuers, limits, usage, active members and webhook endpoints, erasure keys and markers, sync_epoch.';

DO $$
BEGIN
    -- Nested: PL/pgSQL plans the inner test (pg_dist_partition) only where Citus is.
    IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
        IF EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = 'users'::regclass) THEN
            PERFORM create_reference_table('webhook_endpoints');
            PERFORM create_distributed_table('webhook_deliveries', 'user_id', colocate_with => 'users');
        END IF;
    END IF;
END
$$;
