-- public.habitsync_valid_audiences(p_audiences text[])
-- tenant_issuers.audiences: at most 20, each 1-512 characters with no control character.

CREATE OR REPLACE FUNCTION public.habitsync_valid_audiences(p_audiences text[])
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
RETURN ((cardinality(p_audiences) <= 20) AND (array_position(p_audiences, NULL::text) IS NULL) AND COALESCE((SELECT bool_and((((char_length(a.a) >= 1) AND (char_length(a.a) <= 512)) AND (a.a !~ '[\x01-\x1f\x7f-\x9f]'::text))) AS bool_and FROM unnest(habitsync_valid_audiences.p_audiences) a(a)), true))

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
