-- public.habitsync_json_time(v timestamp with time zone)
-- A timestamp as a JSON string in the wire format (RFC 3339, UTC, milliseconds), or null.

CREATE OR REPLACE FUNCTION public.habitsync_json_time(v timestamp with time zone)
 RETURNS text
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$ SELECT coalesce('"' || to_char(v AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"', 'null') $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
