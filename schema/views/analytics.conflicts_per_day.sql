-- analytics.conflicts_per_day
-- Superseded and rejected changes per UTC day, collection and reason.

CREATE VIEW analytics.conflicts_per_day AS
 SELECT conflict_log.tenant_id,
    (conflict_log.logged_at AT TIME ZONE 'UTC'::text)::date AS date,
    conflict_log.collection,
    conflict_log.outcome,
    conflict_log.error_code,
    count(*) AS conflicts
   FROM conflict_log
  GROUP BY conflict_log.tenant_id, ((conflict_log.logged_at AT TIME ZONE 'UTC'::text)::date), conflict_log.collection, conflict_log.outcome, conflict_log.error_code;

COMMENT ON COLUMN analytics.conflicts_per_day.tenant_id IS 'Tenant.';
COMMENT ON COLUMN analytics.conflicts_per_day.date IS 'UTC day logged.';
COMMENT ON COLUMN analytics.conflicts_per_day.collection IS 'Collection as sent.';
COMMENT ON COLUMN analytics.conflicts_per_day.outcome IS 'superseded or rejected.';
COMMENT ON COLUMN analytics.conflicts_per_day.error_code IS 'Rejection code (NULL when superseded).';
COMMENT ON COLUMN analytics.conflicts_per_day.conflicts IS 'How many.';

GRANT SELECT ON analytics.conflicts_per_day TO habitsync_analyst;
GRANT SELECT ON analytics.conflicts_per_day TO habitsync_app;
