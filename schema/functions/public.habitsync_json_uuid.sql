-- public.habitsync_json_uuid(v uuid)
-- A UUID as a JSON string (lower case), or null.

CREATE OR REPLACE FUNCTION public.habitsync_json_uuid(v uuid)
 RETURNS text
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$ SELECT coalesce('"' || v::text || '"', 'null') $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
