-- public.habitsync_habit_months_after_update()
-- A habit update that changes its type, schedule, range or deletion changes its user's streak summaries.

CREATE OR REPLACE FUNCTION public.habitsync_habit_months_after_update()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
DECLARE
    touched record;
BEGIN
    FOR touched IN
        SELECT DISTINCT n.tenant_id, n.user_id FROM updated_old o JOIN updated_new n USING (tenant_id, user_id, id)
        WHERE (o.habit_type, o.schedule_type, o.schedule_n, o.schedule_weekdays, o.start_date, o.end_date, o.deleted_at IS NULL)
              IS DISTINCT FROM (n.habit_type, n.schedule_type, n.schedule_n, n.schedule_weekdays, n.start_date, n.end_date, n.deleted_at IS NULL)
    LOOP
        EXECUTE format('DELETE FROM derived_streak_months WHERE tenant_id = %L AND user_id = %L', touched.tenant_id, touched.user_id);
    END LOOP;
    RETURN NULL;
END
$function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
