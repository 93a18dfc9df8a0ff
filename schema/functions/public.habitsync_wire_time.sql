-- public.habitsync_wire_time(ts timestamp with time zone)
-- A timestamp as the wire writes it: RFC 3339, UTC, milliseconds (2026-11-20T08:15:30.123Z).

CREATE OR REPLACE FUNCTION public.habitsync_wire_time(ts timestamp with time zone)
 RETURNS text
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$ SELECT to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
