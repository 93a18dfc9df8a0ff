-- public.habitsync_exit_runs_after_delete()
-- Removing an exit marks its user's usage_exit_runs for a rebuild.

CREATE OR REPLACE FUNCTION public.habitsync_exit_runs_after_delete()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
DECLARE
    touched record;
BEGIN
    FOR touched IN SELECT DISTINCT tenant_id, user_id FROM deleted WHERE is_exit LOOP
        EXECUTE format('UPDATE users SET exit_runs_zone = NULL WHERE tenant_id = %L AND user_id = %L AND exit_runs_zone IS NOT NULL',
                       touched.tenant_id, touched.user_id);
    END LOOP;
    RETURN NULL;
END
$function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
