-- analytics.user_habit_days_query(p_tenant uuid, p_user text)
-- The text of a query of one user's analytics.habit_days rows for the days $1…$2 only, with each habit's name and schedule: one range scan of the natural key per habit and a GROUP BY on the date, so its cost follows the range (migration 0038); the statistics functions run it.

CREATE OR REPLACE FUNCTION analytics.user_habit_days_query(p_tenant uuid, p_user text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
        SELECT format($query$
            SELECT h.tenant_id, h.user_id, h.id AS habit_id, x.date,
                   h.schedule_type IN ('daily', 'everyNDays', 'specificWeekdays') AS fixed_schedule,
                   x.skipped,
                   h.schedule_type IN ('daily', 'everyNDays', 'specificWeekdays')
                       AND habitsync_is_due(h.schedule_type, h.schedule_n, h.schedule_weekdays, h.start_date, h.end_date, x.date)
                       AND NOT x.skipped AS due,
                   x.recorded AND NOT x.skipped AND x.goal_met AS completed,
                   h.name AS habit_name, h.schedule_type, h.schedule_n
            FROM habits h
            JOIN users u ON u.tenant_id = h.tenant_id AND u.user_id = h.user_id
            CROSS JOIN LATERAL (SELECT greatest(h.start_date, $1, (now() AT TIME ZONE u.time_zone)::date - 3660) AS first_day,
                                       least(h.end_date, $2, (now() AT TIME ZONE u.time_zone)::date) AS last_day) b
            CROSS JOIN LATERAL (
                SELECT k.date, bool_or(k.recorded) AS recorded, bool_or(k.skipped) AS skipped, bool_or(k.goal_met) AS goal_met
                FROM (
                    SELECT d.day::date AS date, false AS recorded, false AS skipped, false AS goal_met
                    FROM generate_series(b.first_day, b.last_day, interval '1 day') AS d(day)
                    UNION ALL
                    (SELECT p.date, true, p.skip_reason IS NOT NULL,
                            CASE h.habit_type WHEN 'breaking' THEN p.progress_count <= p.goal_count ELSE p.progress_count >= p.goal_count END
                     FROM daily_progress p
                     WHERE p.tenant_id = %1$L AND p.user_id = %2$L AND p.habit_id IS NOT NULL AND p.habit_id = h.id
                       AND p.date BETWEEN $1 AND $2 AND p.deleted_at IS NULL
                     ORDER BY p.date)
                ) k
                GROUP BY k.date
                HAVING k.date BETWEEN b.first_day AND b.last_day
            ) x
            WHERE h.deleted_at IS NULL AND h.tenant_id = %1$L AND h.user_id = %2$L AND u.tenant_id = %1$L AND u.user_id = %2$L
            $query$, p_tenant, p_user)
    $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
