-- public.habitsync_json_date(v date)
-- A calendar date as a JSON string (yyyy-MM-dd), or null.

CREATE OR REPLACE FUNCTION public.habitsync_json_date(v date)
 RETURNS text
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$ SELECT coalesce('"' || to_char(v, 'YYYY-MM-DD') || '"', 'null') $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
