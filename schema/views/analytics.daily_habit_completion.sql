-- analytics.daily_habit_completion
-- Per user and day (seed 000, queries 1–3): due habits, completed ones, the rate, and the day's status as the streak rules see it.

CREATE VIEW analytics.daily_habit_completion AS
 SELECT habit_days.tenant_id,
    habit_days.user_id,
    habit_days.date,
    count(*) FILTER (WHERE habit_days.due) AS due_habits,
    count(*) FILTER (WHERE habit_days.due AND habit_days.completed) AS completed_habits,
    round(count(*) FILTER (WHERE habit_days.due AND habit_days.completed)::numeric / NULLIF(count(*) FILTER (WHERE habit_days.due), 0)::numeric, 4) AS completion_rate,
        CASE
            WHEN count(*) FILTER (WHERE habit_days.due) > 0 THEN
            CASE
                WHEN bool_and(habit_days.completed) FILTER (WHERE habit_days.due) THEN 'complete'::text
                ELSE 'incomplete'::text
            END
            WHEN bool_or(habit_days.completed) FILTER (WHERE NOT habit_days.fixed_schedule) THEN 'complete'::text
            ELSE 'rest'::text
        END AS day_status
   FROM analytics.habit_days
  GROUP BY habit_days.tenant_id, habit_days.user_id, habit_days.date;

COMMENT ON COLUMN analytics.daily_habit_completion.tenant_id IS 'Tenant.';
COMMENT ON COLUMN analytics.daily_habit_completion.user_id IS 'User.';
COMMENT ON COLUMN analytics.daily_habit_completion.date IS 'Calendar day in the user''s time zone.';
COMMENT ON COLUMN analytics.daily_habit_completion.due_habits IS 'Habits due that day.';
COMMENT ON COLUMN analytics.daily_habit_completion.completed_habits IS 'Due habits completed that day.';
COMMENT ON COLUMN analytics.daily_habit_completion.completion_rate IS 'completed_habits / due_habits (NULL when nothing was due).';
COMMENT ON COLUMN analytics.daily_habit_completion.day_status IS 'complete, incomplete or rest (today shows incomplete until done; the streak does not break on it yet).';

GRANT SELECT ON analytics.daily_habit_completion TO habitsync_analyst;
GRANT SELECT ON analytics.daily_habit_completion TO habitsync_app;
