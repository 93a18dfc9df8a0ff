-- analytics.usage_daily_trend
-- The last 30 days per user with usage events (seed 002 trend), days without events included.

CREATE VIEW analytics.usage_daily_trend AS
 SELECT u.tenant_id,
    u.user_id,
    d.day::date AS date,
    count(e.id) FILTER (WHERE e.event_type = 'exit_to_focus'::text) AS conscious_exits,
    count(e.id) AS events,
    COALESCE(sum(e.pause_duration), 0::double precision) AS pause_seconds
   FROM users u
     CROSS JOIN LATERAL generate_series(((now() AT TIME ZONE u.time_zone)::date - 29)::timestamp with time zone, (now() AT TIME ZONE u.time_zone)::date::timestamp with time zone, 'P1D'::interval) d(day)
     LEFT JOIN usage_events e ON e.tenant_id = u.tenant_id AND e.user_id = u.user_id AND e.occurred_at >= (now() - 'P32D'::interval) AND e.occurred_at < (now() + 'P2D'::interval) AND (e.occurred_at AT TIME ZONE u.time_zone)::date = d.day::date
  WHERE (EXISTS ( SELECT 1
           FROM usage_events x
          WHERE x.tenant_id = u.tenant_id AND x.user_id = u.user_id))
  GROUP BY u.tenant_id, u.user_id, d.day;

COMMENT ON COLUMN analytics.usage_daily_trend.tenant_id IS 'Tenant.';
COMMENT ON COLUMN analytics.usage_daily_trend.user_id IS 'User.';
COMMENT ON COLUMN analytics.usage_daily_trend.date IS 'Calendar day in the user''s time zone.';
COMMENT ON COLUMN analytics.usage_daily_trend.conscious_exits IS 'exit_to_focus events that day.';
COMMENT ON COLUMN analytics.usage_daily_trend.events IS 'All usage events that day.';
COMMENT ON COLUMN analytics.usage_daily_trend.pause_seconds IS 'Sum of pause_duration that day.';

GRANT SELECT ON analytics.usage_daily_trend TO habitsync_analyst;
GRANT SELECT ON analytics.usage_daily_trend TO habitsync_app;
