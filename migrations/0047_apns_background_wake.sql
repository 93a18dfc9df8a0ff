-- APNs background wake (docs/operations.md, "Waking iPhones"): an iPhone that is not in the
-- foreground hears of a change another device pushed through a silent notification, which the
-- app answers by syncing. A device registers its APNs token (PUT /v1/devices/{id}/push-token);
-- a tenant's APNs key is set with `tenant set-apns`. A push that stores something marks the
-- user's other devices' tokens as due a wake, in its own transaction; every replica's waker
-- sends them, at most one per device per the tenant's interval.

CREATE TABLE tenant_apns (
    tenant_id uuid PRIMARY KEY REFERENCES tenants (id) ON DELETE CASCADE,
    key_id text NOT NULL CHECK (key_id ~ '^[A-Z0-9]{10}$'),
    team_id text NOT NULL CHECK (team_id ~ '^[A-Z0-9]{10}$'),
    topic text NOT NULL CHECK (octet_length(topic) <= 255 AND topic ~ '^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$'),
    environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
    signing_key text NOT NULL CHECK (octet_length(signing_key) BETWEEN 100 AND 4096 AND signing_key LIKE '-----BEGIN PRIVATE KEY-----%'),
    wake_interval_seconds integer NOT NULL DEFAULT 60 CHECK (wake_interval_seconds BETWEEN 1 AND 86400),
    updated_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE tenant_apns IS 'A tenant''s APNs token-auth key (tenant set-apns): what its devices'' background wakes are sent with.';
COMMENT ON COLUMN tenant_apns.tenant_id IS 'The tenant.';
COMMENT ON COLUMN tenant_apns.key_id IS 'The key''s id in Apple''s developer account (10 characters): the JWT''s kid.';
COMMENT ON COLUMN tenant_apns.team_id IS 'The developer team''s id (10 characters): the JWT''s iss.';
COMMENT ON COLUMN tenant_apns.topic IS 'The app''s bundle id: apns-topic.';
COMMENT ON COLUMN tenant_apns.environment IS 'sandbox (development builds) or production.';
COMMENT ON COLUMN tenant_apns.signing_key IS 'The .p8 file: the P-256 private key in PKCS#8 PEM. Never printed; not for analysts.';
COMMENT ON COLUMN tenant_apns.wake_interval_seconds IS 'At most one wake per device this often (Apple throttles more).';
COMMENT ON COLUMN tenant_apns.updated_at IS 'When it was last set.';

ALTER TABLE tenant_apns ENABLE ROW LEVEL SECURITY;
ALTER TABLE tenant_apns FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON tenant_apns USING (tenant_id = habitsync_current_tenant_id()) WITH CHECK (tenant_id = habitsync_current_tenant_id());
-- The waker reads every tenant's.
CREATE POLICY waker ON tenant_apns FOR SELECT USING (current_setting('habitsync.scope', true) = 'wakes');
GRANT SELECT, INSERT, UPDATE, DELETE ON tenant_apns TO habitsync_app;

CREATE TABLE device_push_tokens (
    tenant_id uuid NOT NULL,
    user_id text NOT NULL,
    device_id text NOT NULL CHECK (char_length(device_id) BETWEEN 1 AND 100),
    token text NOT NULL CHECK (token ~ '^[0-9a-f]+$' AND octet_length(token) BETWEEN 16 AND 400 AND octet_length(token) % 2 = 0),
    updated_at timestamptz NOT NULL DEFAULT now(),
    wake_due boolean NOT NULL DEFAULT false,
    last_wake_at timestamptz,
    PRIMARY KEY (tenant_id, user_id, device_id),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, user_id) ON DELETE CASCADE
);
COMMENT ON TABLE device_push_tokens IS 'Each device''s APNs token (PUT /v1/devices/{id}/push-token), and whether a wake is due it.';
COMMENT ON COLUMN device_push_tokens.tenant_id IS 'The tenant.';
COMMENT ON COLUMN device_push_tokens.user_id IS 'The user.';
COMMENT ON COLUMN device_push_tokens.device_id IS 'The device (its X-Device-Id).';
COMMENT ON COLUMN device_push_tokens.token IS 'The APNs device token, in lowercase hex. Replaced when the device registers again; deleted when APNs says it is no longer valid.';
COMMENT ON COLUMN device_push_tokens.updated_at IS 'When the device last registered it.';
COMMENT ON COLUMN device_push_tokens.wake_due IS 'Another device of the user pushed a change since the last wake.';
COMMENT ON COLUMN device_push_tokens.last_wake_at IS 'When a wake was last sent to it.';

-- The wakes due, oldest first.
CREATE INDEX device_push_tokens_due ON device_push_tokens (last_wake_at NULLS FIRST) WHERE wake_due;

ALTER TABLE device_push_tokens ENABLE ROW LEVEL SECURITY;
ALTER TABLE device_push_tokens FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON device_push_tokens USING (habitsync_row_visible(tenant_id, user_id)) WITH CHECK (habitsync_row_visible(tenant_id, user_id));
CREATE POLICY waker ON device_push_tokens
    USING (current_setting('habitsync.scope', true) = 'wakes') WITH CHECK (current_setting('habitsync.scope', true) = 'wakes');
GRANT SELECT, INSERT, UPDATE, DELETE ON device_push_tokens TO habitsync_app;

-- On Citus tenant_apns is a reference table and device_push_tokens is distributed with users;
-- wakes, like webhooks, are not sent there yet (deploy/README.md).
CREATE OR REPLACE FUNCTION habitsync_reference_tables() RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN '{tenants,tenant_keys,tenant_issuers,tenant_limits,tenant_usage,tenant_active_members,webhook_endpoints,tenant_apns,erasure_keys,erased_users,sync_epoch}'::text[];
COMMENT ON FUNCTION habitsync_reference_tables() IS 'Tables that are reference tables on Citus (copied to every node): tenants, their keys, issuers, limits, usage, active members, webhook endpoints and APNs keys, erasure keys and markers, sync_epoch.';

DO $$
BEGIN
    -- Nested: PL/pgSQL plans the inner test (pg_dist_partition) only where Citus is.
    IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
        IF EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = 'users'::regclass) THEN
            PERFORM create_reference_table('tenant_apns');
            PERFORM create_distributed_table('device_push_tokens', 'user_id', colocate_with => 'users');
        END IF;
    END IF;
END
$$;
