-- public.habitsync_digest_term(p_id uuid, p_version bigint)
-- A live record's term of its collection's digest: the first 8 bytes of md5('<id>:<server_version>'), as a signed 64-bit number.

CREATE OR REPLACE FUNCTION public.habitsync_digest_term(p_id uuid, p_version bigint)
 RETURNS bigint
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$ SELECT ('x' || substr(md5(p_id::text || ':' || p_version::text), 1, 16))::bit(64)::bigint $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
