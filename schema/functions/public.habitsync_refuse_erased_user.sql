-- public.habitsync_refuse_erased_user()
-- Refuses (SQLSTATE HS410) to create the users row of an erased account; requests that lock an existing row ask habitsync_assert_not_erased before and after the lock.

CREATE OR REPLACE FUNCTION public.habitsync_refuse_erased_user()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'public', 'pg_catalog'
AS $function$
BEGIN
    IF habitsync_user_erased(NEW.tenant_id, NEW.user_id) THEN
        RAISE EXCEPTION 'the account was erased' USING ERRCODE = 'HS410';
    END IF;
    RETURN NEW;
END
$function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
