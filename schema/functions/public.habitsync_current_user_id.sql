-- public.habitsync_current_user_id()
-- The user of the current transaction (habitsync.user_id); NULL when unset, which shows no per-user rows unless habitsync.scope is 'tenant'.

CREATE OR REPLACE FUNCTION public.habitsync_current_user_id()
 RETURNS text
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$ SELECT NULLIF(current_setting('habitsync.user_id', true), '') $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
