-- public.habitsync_database_epoch()
-- The database's current sync epoch (sync_epoch.epoch).

CREATE OR REPLACE FUNCTION public.habitsync_database_epoch()
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$ SELECT epoch FROM sync_epoch $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
