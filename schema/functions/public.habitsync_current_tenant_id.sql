-- public.habitsync_current_tenant_id()
-- The tenant of the current transaction (set_config('habitsync.tenant_id', …, true)); NULL when unset, which makes every per-tenant table look empty.

CREATE OR REPLACE FUNCTION public.habitsync_current_tenant_id()
 RETURNS uuid
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$ SELECT NULLIF(current_setting('habitsync.tenant_id', true), '')::uuid $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
