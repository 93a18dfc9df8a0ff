-- Active users and devices, and stored rows, in the per-tenant metering (docs/analytics.md,
-- "Tenant usage"). A day's active users are distinct across every replica and flush, so
-- each replica adds the members it saw to tenant_active_members, whose key keeps each once,
-- and counts in tenant_usage only those that were new. A member is a hash of the tenant and
-- the user id (a device: and the device id), never the id itself; the rows are kept two
-- days (a flush deletes older ones), and an account's erasure deletes its user's and
-- devices' rows at once.

ALTER TABLE tenant_usage ADD COLUMN active_users bigint NOT NULL DEFAULT 0 CHECK (active_users >= 0);
ALTER TABLE tenant_usage ADD COLUMN active_devices bigint NOT NULL DEFAULT 0 CHECK (active_devices >= 0);
ALTER TABLE tenant_usage ADD COLUMN stored_rows bigint CHECK (stored_rows >= 0);
COMMENT ON COLUMN tenant_usage.active_users IS 'Users who pushed or pulled that day, each once across every replica.';
COMMENT ON COLUMN tenant_usage.active_devices IS 'Devices (a user''s X-Device-Id) that pushed or pulled that day, each once.';
COMMENT ON COLUMN tenant_usage.stored_rows IS 'The rows the tenant stored (live records and usage events) as last counted that day; NULL: not counted that day. Each replica counts a tenant it serves at most once an hour.';

CREATE FUNCTION habitsync_member_hash(p_tenant uuid, p_member text) RETURNS bytea
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN substring(sha256(convert_to(p_tenant::text || chr(31) || p_member, 'UTF8')) FROM 1 FOR 16);
COMMENT ON FUNCTION habitsync_member_hash(uuid, text) IS 'A member of tenant_active_members: 16 bytes of SHA-256 of the tenant, U+001F and the user id (a device: user id, U+001F, device id).';

CREATE TABLE tenant_active_members (
    day date NOT NULL,
    tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    kind text NOT NULL CHECK (kind IN ('user', 'device')),
    member bytea NOT NULL CHECK (octet_length(member) = 16),
    PRIMARY KEY (day, tenant_id, kind, member)
);
COMMENT ON TABLE tenant_active_members IS 'Who was active per tenant and UTC day, hashed (habitsync_member_hash): what makes tenant_usage.active_users and active_devices distinct across replicas. Kept two days.';
COMMENT ON COLUMN tenant_active_members.day IS 'The UTC day.';
COMMENT ON COLUMN tenant_active_members.tenant_id IS 'The tenant.';
COMMENT ON COLUMN tenant_active_members.kind IS 'user or device.';
COMMENT ON COLUMN tenant_active_members.member IS 'habitsync_member_hash of the user, or of the user and device.';

ALTER TABLE tenant_active_members ENABLE ROW LEVEL SECURITY;
ALTER TABLE tenant_active_members FORCE ROW LEVEL SECURITY;
-- A replica's flush adds and prunes them, in a transaction that says so.
CREATE POLICY meter_write ON tenant_active_members
    USING (current_setting('habitsync.scope', true) = 'meter') WITH CHECK (current_setting('habitsync.scope', true) = 'meter');
-- An account's erasure removes its user's and devices' rows (a DELETE with a WHERE needs to
-- see them too).
CREATE POLICY erase_own ON tenant_active_members FOR DELETE USING (tenant_id = habitsync_current_tenant_id());
CREATE POLICY tenant_read ON tenant_active_members FOR SELECT USING (tenant_id = habitsync_current_tenant_id());
GRANT SELECT, INSERT, DELETE ON tenant_active_members TO habitsync_app;

-- On Citus a row of tenant_usage or tenant_active_members (reference tables) has its foreign
-- key to tenants checked on every node as the flush's role, with a row lock (FOR KEY SHARE),
-- which needs UPDATE on a column of tenants: every flush was refused there ("permission
-- denied for table tenants"). The request role gets it on id alone, which it cannot use: the
-- only policy that lets it update tenants (tenant_isolation) keeps id its own tenant's, and
-- the foreign keys to tenants refuse a change of id.
GRANT UPDATE (id) ON tenants TO habitsync_app;

-- A reference table on Citus, as tenant_usage.
CREATE OR REPLACE FUNCTION habitsync_reference_tables() RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN '{tenants,tenant_keys,tenant_issuers,tenant_limits,tenant_usage,tenant_active_members,erasure_keys,erased_users,sync_epoch}'::text[];
COMMENT ON FUNCTION habitsync_reference_tables() IS 'Tables that are reference tables on Citus (copied to every node): tenants, their keys, issuers, limits, usage and active members, erasure keys and markers, sync_epoch.';

DO $$
BEGIN
    -- Nested: PL/pgSQL plans the inner test (pg_dist_partition) only where Citus is.
    IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
        IF EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = 'users'::regclass) THEN
            PERFORM create_reference_table('tenant_active_members');
        END IF;
    END IF;
END
$$;
