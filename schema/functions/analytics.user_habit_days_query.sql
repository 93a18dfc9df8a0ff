-- analytics.user_habit_days_query(p_tenant uuid, p_user text)
-- The text of a query of one user's analytics.habit_days rows for the days $1…$2 only (its cost follows the range); the statistics functions run it.

CREATE OR REPLACE FUNCTION analytics.user_habit_days_query(p_tenant uuid, p_user text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
        SELECT format($query$
            SELECT h.tenant_id, h.user_id, h.id AS habit_id, d.day::date AS date,
                   h.schedule_type IN ('daily', 'everyNDays', 'specificWeekdays') AS fixed_schedule,
                   coalesce(p.skip_reason IS NOT NULL, false) AS skipped,
                   h.schedule_type IN ('daily', 'everyNDays', 'specificWeekdays')
                       AND habitsync_is_due(h.schedule_type, h.schedule_n, h.schedule_weekdays, h.start_date, h.end_date, d.day::date)
                       AND p.skip_reason IS NULL AS due,
                   p.id IS NOT NULL AND p.skip_reason IS NULL
                       AND CASE h.habit_type WHEN 'breaking' THEN p.progress_count <= p.goal_count ELSE p.progress_count >= p.goal_count END AS completed
            FROM habits h
            JOIN users u ON u.tenant_id = h.tenant_id AND u.user_id = h.user_id
            CROSS JOIN LATERAL generate_series(greatest(h.start_date, $1, (now() AT TIME ZONE u.time_zone)::date - 3660),
                                               least(h.end_date, $2, (now() AT TIME ZONE u.time_zone)::date), interval '1 day') AS d(day)
            LEFT JOIN daily_progress p ON p.tenant_id = h.tenant_id AND p.user_id = h.user_id AND p.habit_id = h.id
                                      AND p.date = d.day::date AND p.deleted_at IS NULL
            WHERE h.deleted_at IS NULL AND h.tenant_id = %1$L AND h.user_id = %2$L AND u.tenant_id = %1$L AND u.user_id = %2$L
            $query$, p_tenant, p_user)
    $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
