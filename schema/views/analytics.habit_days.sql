-- analytics.habit_days
-- One row per live habit and calendar day from its start (at most ten years back) to its end or the user's today: whether it was due (fixed schedules, not skipped) and completed.

CREATE VIEW analytics.habit_days AS
 SELECT h.tenant_id,
    h.user_id,
    h.id AS habit_id,
    d.day::date AS date,
    h.schedule_type = ANY (ARRAY['daily'::text, 'everyNDays'::text, 'specificWeekdays'::text]) AS fixed_schedule,
    COALESCE(p.skip_reason IS NOT NULL, false) AS skipped,
    (h.schedule_type = ANY (ARRAY['daily'::text, 'everyNDays'::text, 'specificWeekdays'::text])) AND habitsync_is_due(h.schedule_type, h.schedule_n, h.schedule_weekdays, h.start_date, h.end_date, d.day::date) AND p.skip_reason IS NULL AS due,
    p.id IS NOT NULL AND p.skip_reason IS NULL AND
        CASE h.habit_type
            WHEN 'breaking'::text THEN p.progress_count <= p.goal_count
            ELSE p.progress_count >= p.goal_count
        END AS completed
   FROM habits h
     JOIN users u ON u.tenant_id = h.tenant_id AND u.user_id = h.user_id
     CROSS JOIN LATERAL generate_series(GREATEST(h.start_date, (now() AT TIME ZONE u.time_zone)::date - 3660)::timestamp with time zone, LEAST(h.end_date, (now() AT TIME ZONE u.time_zone)::date)::timestamp with time zone, 'P1D'::interval) d(day)
     LEFT JOIN daily_progress p ON p.tenant_id = h.tenant_id AND p.user_id = h.user_id AND p.habit_id = h.id AND p.date = d.day::date AND p.deleted_at IS NULL
  WHERE h.deleted_at IS NULL;

COMMENT ON COLUMN analytics.habit_days.tenant_id IS 'Tenant.';
COMMENT ON COLUMN analytics.habit_days.user_id IS 'User.';
COMMENT ON COLUMN analytics.habit_days.habit_id IS 'Habit.';
COMMENT ON COLUMN analytics.habit_days.date IS 'Calendar day in the user''s time zone.';
COMMENT ON COLUMN analytics.habit_days.fixed_schedule IS 'daily, everyNDays or specificWeekdays (frequency habits are never due).';
COMMENT ON COLUMN analytics.habit_days.skipped IS 'The user skipped the day (neutral).';
COMMENT ON COLUMN analytics.habit_days.due IS 'Due that day: fixed schedule names it and it was not skipped.';
COMMENT ON COLUMN analytics.habit_days.completed IS 'Completed: goal met (formation) or ceiling kept (breaking), not skipped.';

GRANT SELECT ON analytics.habit_days TO habitsync_analyst;
GRANT SELECT ON analytics.habit_days TO habitsync_app;
