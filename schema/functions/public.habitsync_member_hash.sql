-- public.habitsync_member_hash(p_tenant uuid, p_member text)
-- A member of tenant_active_members: 16 bytes of SHA-256 of the tenant, U+001F and the user id (a device: user id, U+001F, device id).

CREATE OR REPLACE FUNCTION public.habitsync_member_hash(p_tenant uuid, p_member text)
 RETURNS bytea
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE STRICT
RETURN SUBSTRING(sha256(convert_to((((p_tenant)::text || chr(31)) || p_member), 'UTF8'::name)) FROM 1 FOR 16)

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
