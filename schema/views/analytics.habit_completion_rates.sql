-- analytics.habit_completion_rates
-- Per habit over its whole life to today: completion rate and struggling (rate below 50%). Fixed schedules: completed due days / due days; frequency habits: completed days / the days the frequency asks for (n per 7 or 30 days, skips excluded).

CREATE VIEW analytics.habit_completion_rates AS
 SELECT habit_completion_between.tenant_id,
    habit_completion_between.user_id,
    habit_completion_between.habit_id,
    habit_completion_between.habit_name,
    habit_completion_between.schedule_type,
    habit_completion_between.due_days,
    habit_completion_between.completed_days,
    habit_completion_between.completion_rate,
    habit_completion_between.struggling
   FROM analytics.habit_completion_between('-infinity'::date, 'infinity'::date) habit_completion_between(tenant_id, user_id, habit_id, habit_name, schedule_type, due_days, completed_days, completion_rate, struggling);

COMMENT ON COLUMN analytics.habit_completion_rates.tenant_id IS 'Tenant.';
COMMENT ON COLUMN analytics.habit_completion_rates.user_id IS 'User.';
COMMENT ON COLUMN analytics.habit_completion_rates.habit_id IS 'Habit.';
COMMENT ON COLUMN analytics.habit_completion_rates.habit_name IS 'The habit''s name.';
COMMENT ON COLUMN analytics.habit_completion_rates.schedule_type IS 'The habit''s schedule type.';
COMMENT ON COLUMN analytics.habit_completion_rates.due_days IS 'Days it was due (fixed schedules).';
COMMENT ON COLUMN analytics.habit_completion_rates.completed_days IS 'Days it was completed.';
COMMENT ON COLUMN analytics.habit_completion_rates.completion_rate IS 'Share of what was asked that was done (0–1; NULL when nothing was asked yet).';
COMMENT ON COLUMN analytics.habit_completion_rates.struggling IS 'completion_rate below 0.5.';

GRANT SELECT ON analytics.habit_completion_rates TO habitsync_analyst;
GRANT SELECT ON analytics.habit_completion_rates TO habitsync_app;
