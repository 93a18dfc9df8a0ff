-- public.habitsync_wire_date(d date)
-- A calendar date as the wire writes it: yyyy-MM-dd.

CREATE OR REPLACE FUNCTION public.habitsync_wire_date(d date)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$ SELECT to_char(d, 'YYYY-MM-DD') $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
