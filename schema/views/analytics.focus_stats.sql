-- analytics.focus_stats
-- ForestStats per user (seed 001, T011), with completion_rate = completed / (completed + abandoned) × 100 (erratum 7).

CREATE VIEW analytics.focus_stats AS
 WITH sessions AS (
         SELECT f.tenant_id,
            f.user_id,
            f.state,
            f.duration,
            (COALESCE(f.end_time, f.start_time) AT TIME ZONE u.time_zone)::date AS day,
            (now() AT TIME ZONE u.time_zone)::date AS today
           FROM focus_sessions f
             JOIN users u ON u.tenant_id = f.tenant_id AND u.user_id = f.user_id
          WHERE f.deleted_at IS NULL
        ), days AS (
         SELECT DISTINCT sessions.tenant_id,
            sessions.user_id,
            sessions.day,
            sessions.today
           FROM sessions
          WHERE sessions.state = 'completed'::text AND sessions.day <= sessions.today
        ), islands AS (
         SELECT numbered.tenant_id,
            numbered.user_id,
            numbered.today,
            min(numbered.day) AS first_day,
            max(numbered.day) AS last_day,
            count(*) AS length
           FROM ( SELECT days.tenant_id,
                    days.user_id,
                    days.day,
                    days.today,
                    days.day - row_number() OVER (PARTITION BY days.tenant_id, days.user_id ORDER BY days.day)::integer AS island
                   FROM days) numbered
          GROUP BY numbered.tenant_id, numbered.user_id, numbered.today, numbered.island
        ), streaks AS (
         SELECT islands.tenant_id,
            islands.user_id,
            max(islands.length) AS longest_streak,
            COALESCE(max(islands.length) FILTER (WHERE islands.last_day >= (islands.today - 1)), 0::bigint) AS current_streak
           FROM islands
          GROUP BY islands.tenant_id, islands.user_id
        )
 SELECT s.tenant_id,
    s.user_id,
    count(*) FILTER (WHERE s.state = 'completed'::text) AS total_trees,
    COALESCE(sum(s.duration) FILTER (WHERE s.state = 'completed'::text), 0::double precision) AS total_focus_time,
    count(*) FILTER (WHERE s.state = ANY (ARRAY['completed'::text, 'abandoned'::text])) AS total_sessions,
    count(*) FILTER (WHERE s.state = 'completed'::text AND s.day = s.today) AS todays_trees,
    COALESCE(sum(s.duration) FILTER (WHERE s.state = 'completed'::text AND s.day = s.today), 0::double precision) AS todays_focus_time,
    COALESCE(max(k.current_streak), 0::bigint) AS current_streak,
    COALESCE(max(k.longest_streak), 0::bigint) AS longest_streak,
    count(*) FILTER (WHERE s.state = 'abandoned'::text) AS abandoned_count,
    COALESCE(round(count(*) FILTER (WHERE s.state = 'completed'::text)::numeric * 100::numeric / NULLIF(count(*) FILTER (WHERE s.state = ANY (ARRAY['completed'::text, 'abandoned'::text])), 0)::numeric, 4), 0::numeric) AS completion_rate
   FROM sessions s
     LEFT JOIN streaks k ON k.tenant_id = s.tenant_id AND k.user_id = s.user_id
  GROUP BY s.tenant_id, s.user_id;

COMMENT ON COLUMN analytics.focus_stats.tenant_id IS 'Tenant.';
COMMENT ON COLUMN analytics.focus_stats.user_id IS 'User.';
COMMENT ON COLUMN analytics.focus_stats.total_trees IS 'Completed sessions.';
COMMENT ON COLUMN analytics.focus_stats.total_focus_time IS 'Seconds of focus in completed sessions.';
COMMENT ON COLUMN analytics.focus_stats.total_sessions IS 'Finished sessions: completed + abandoned.';
COMMENT ON COLUMN analytics.focus_stats.todays_trees IS 'Sessions completed today (user''s time zone).';
COMMENT ON COLUMN analytics.focus_stats.todays_focus_time IS 'Seconds of focus completed today.';
COMMENT ON COLUMN analytics.focus_stats.current_streak IS 'Consecutive days with a completed session, ending today or yesterday.';
COMMENT ON COLUMN analytics.focus_stats.longest_streak IS 'Longest such run.';
COMMENT ON COLUMN analytics.focus_stats.abandoned_count IS 'Abandoned sessions.';
COMMENT ON COLUMN analytics.focus_stats.completion_rate IS 'completed / (completed + abandoned) × 100.';

GRANT SELECT ON analytics.focus_stats TO habitsync_analyst;
GRANT SELECT ON analytics.focus_stats TO habitsync_app;
