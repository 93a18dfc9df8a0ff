-- public.habitsync_assert_not_erased(p_tenant uuid, p_user text)
-- Raises HS410 when the account was erased (habitsync_user_erased): asked before and after a request takes the user's lock.

CREATE OR REPLACE FUNCTION public.habitsync_assert_not_erased(p_tenant uuid, p_user text)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'public', 'pg_catalog'
AS $function$
BEGIN
    IF habitsync_user_erased(p_tenant, p_user) THEN
        RAISE EXCEPTION 'the account was erased' USING ERRCODE = 'HS410';
    END IF;
END
$function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
