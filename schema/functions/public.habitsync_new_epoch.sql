-- public.habitsync_new_epoch()
-- A new random epoch: 16 lowercase hexadecimal digits.

CREATE OR REPLACE FUNCTION public.habitsync_new_epoch()
 RETURNS text
 LANGUAGE sql
AS $function$ SELECT encode(substr(uuid_send(gen_random_uuid()), 9, 8), 'hex') $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
