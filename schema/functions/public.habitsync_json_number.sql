-- public.habitsync_json_number(v double precision)
-- A number as JSON (the columns hold finite values only), or null.

CREATE OR REPLACE FUNCTION public.habitsync_json_number(v double precision)
 RETURNS text
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$ SELECT coalesce(v::text, 'null') $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
