-- analytics.usage_stats
-- Usage statistics per user (seed 002).

CREATE VIEW analytics.usage_stats AS
 SELECT usage_events.tenant_id,
    usage_events.user_id,
    COALESCE(sum(usage_events.pause_duration) FILTER (WHERE usage_events.event_type = 'exit_to_focus'::text), 0::double precision) / 3600.0::double precision AS hours_reclaimed,
    count(*) FILTER (WHERE usage_events.event_type = 'exit_to_focus'::text) AS total_conscious_exits,
    COALESCE(avg(usage_events.pause_duration), 0::double precision) AS average_pause_time,
    count(*) FILTER (WHERE usage_events.event_type = 'exit_to_focus'::text)::double precision / NULLIF(count(*), 0)::double precision AS intentionality_score
   FROM usage_events
  GROUP BY usage_events.tenant_id, usage_events.user_id;

COMMENT ON COLUMN analytics.usage_stats.tenant_id IS 'Tenant.';
COMMENT ON COLUMN analytics.usage_stats.user_id IS 'User.';
COMMENT ON COLUMN analytics.usage_stats.hours_reclaimed IS 'Hours of pause in conscious exits (exit_to_focus).';
COMMENT ON COLUMN analytics.usage_stats.total_conscious_exits IS 'exit_to_focus events.';
COMMENT ON COLUMN analytics.usage_stats.average_pause_time IS 'Mean pause_duration over all events, seconds.';
COMMENT ON COLUMN analytics.usage_stats.intentionality_score IS 'exit_to_focus events / all events.';

GRANT SELECT ON analytics.usage_stats TO habitsync_analyst;
GRANT SELECT ON analytics.usage_stats TO habitsync_app;
