-- public.habitsync_json_integer(v bigint)
-- An integer as JSON, or null.

CREATE OR REPLACE FUNCTION public.habitsync_json_integer(v bigint)
 RETURNS text
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$ SELECT coalesce(v::text, 'null') $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
