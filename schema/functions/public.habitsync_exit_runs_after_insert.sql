-- public.habitsync_exit_runs_after_insert()
-- Adds new exit_to_focus days to usage_exit_runs, merging adjacent runs, for users whose runs are built in their current time zone.

CREATE OR REPLACE FUNCTION public.habitsync_exit_runs_after_insert()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
DECLARE
    who record;
    zone text;
    exit_day date;
    covered boolean;
BEGIN
    FOR who IN SELECT DISTINCT tenant_id, user_id FROM inserted WHERE is_exit ORDER BY 1, 2 LOOP
        EXECUTE format('SELECT time_zone FROM users WHERE tenant_id = %L AND user_id = %L AND exit_runs_zone = time_zone',
                       who.tenant_id, who.user_id) INTO zone;
        CONTINUE WHEN zone IS NULL;
        FOR exit_day IN
            SELECT DISTINCT (i.occurred_at AT TIME ZONE zone)::date FROM inserted i
            WHERE i.tenant_id = who.tenant_id AND i.user_id = who.user_id AND i.is_exit ORDER BY 1
        LOOP
            EXECUTE format('SELECT EXISTS (SELECT 1 FROM usage_exit_runs WHERE tenant_id = %L AND user_id = %L AND first_day <= %L AND last_day >= %L)',
                           who.tenant_id, who.user_id, exit_day, exit_day) INTO covered;
            CONTINUE WHEN covered;
            EXECUTE format($sql$
                WITH joined AS (
                    DELETE FROM usage_exit_runs WHERE tenant_id = %1$L AND user_id = %2$L
                        AND (last_day = %3$L::date - 1 OR first_day = %3$L::date + 1)
                    RETURNING first_day, last_day)
                INSERT INTO usage_exit_runs (tenant_id, user_id, first_day, last_day)
                SELECT %1$L, %2$L, least(%3$L::date, min(first_day)), greatest(%3$L::date, max(last_day)) FROM joined
                $sql$, who.tenant_id, who.user_id, exit_day);
        END LOOP;
    END LOOP;
    RETURN NULL;
END
$function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
