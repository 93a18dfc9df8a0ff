-- public.habitsync_reference_tables()
-- Tables that are reference tables on Citus (copied to every node): tenants, their keys, issuers, limits, usage, active members, webhook endpoints and APNs keys, erasure keys and markers, sync_epoch.

CREATE OR REPLACE FUNCTION public.habitsync_reference_tables()
 RETURNS text[]
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
RETURN '{tenants,tenant_keys,tenant_issuers,tenant_limits,tenant_usage,tenant_active_members,webhook_endpoints,tenant_apns,erasure_keys,erased_users,sync_epoch}'::text[]

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
