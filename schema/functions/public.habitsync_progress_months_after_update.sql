-- public.habitsync_progress_months_after_update()
-- A daily_progress update that changes what the day classification reads changes the streak summaries of its old and new month.

CREATE OR REPLACE FUNCTION public.habitsync_progress_months_after_update()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
DECLARE
    touched record;
BEGIN
    FOR touched IN
        WITH changed AS (
            SELECT o.tenant_id, o.user_id, o.date AS old_date, n.date AS new_date
            FROM updated_old o JOIN updated_new n USING (tenant_id, user_id, id)
            WHERE (o.habit_id, o.date, o.progress_count, o.goal_count, o.skip_reason IS NULL, o.deleted_at IS NULL)
                  IS DISTINCT FROM (n.habit_id, n.date, n.progress_count, n.goal_count, n.skip_reason IS NULL, n.deleted_at IS NULL))
        SELECT DISTINCT tenant_id, user_id, date_trunc('month', day)::date AS month
        FROM (SELECT tenant_id, user_id, old_date AS day FROM changed UNION ALL SELECT tenant_id, user_id, new_date FROM changed) d
        WHERE day IS NOT NULL
    LOOP
        PERFORM habitsync_forget_streak_month(touched.tenant_id, touched.user_id, touched.month);
    END LOOP;
    RETURN NULL;
END
$function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
