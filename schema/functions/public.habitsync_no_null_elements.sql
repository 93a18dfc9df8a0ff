-- public.habitsync_no_null_elements(items anyarray)
-- True when an array has no NULL element.

CREATE OR REPLACE FUNCTION public.habitsync_no_null_elements(items anyarray)
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$ SELECT array_position(items, NULL) IS NULL $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
