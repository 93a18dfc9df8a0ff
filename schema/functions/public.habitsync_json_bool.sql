-- public.habitsync_json_bool(v boolean)
-- A boolean as JSON true/false, or null.

CREATE OR REPLACE FUNCTION public.habitsync_json_bool(v boolean)
 RETURNS text
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$ SELECT CASE WHEN v THEN 'true' WHEN NOT v THEN 'false' ELSE 'null' END $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
