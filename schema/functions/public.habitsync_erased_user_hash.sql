-- public.habitsync_erased_user_hash(p_tenant uuid, p_user text)
-- The marker hash of a user; NULL while the tenant has no erasure key (nobody was erased).

CREATE OR REPLACE FUNCTION public.habitsync_erased_user_hash(p_tenant uuid, p_user text)
 RETURNS bytea
 LANGUAGE sql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_catalog'
AS $function$ SELECT sha256(k.key || convert_to(p_user, 'UTF8')) FROM erasure_keys k WHERE k.tenant_id = p_tenant $function$

-- Privileges
-- none but the owner's
