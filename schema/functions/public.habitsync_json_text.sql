-- public.habitsync_json_text(v text)
-- A text value as a JSON string (escaped), or null.

CREATE OR REPLACE FUNCTION public.habitsync_json_text(v text)
 RETURNS text
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$ SELECT coalesce(to_json(v)::text, 'null') $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
