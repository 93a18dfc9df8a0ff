-- Usage events are partitioned by month, so their primary key includes occurred_at and an id
-- can only be found by probing every partition: a push of 40 events paid for 61 partitions,
-- at planning and at execution. This registry of ids (one unpartitioned index) answers "was
-- this event id seen before?" for the append-only rule, and pushes insert into it first.
CREATE TABLE usage_event_ids (
    tenant_id   uuid NOT NULL,
    user_id     text NOT NULL,
    id          uuid NOT NULL,
    occurred_at timestamptz(3) NOT NULL,
    PRIMARY KEY (tenant_id, user_id, id),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, user_id) ON DELETE CASCADE
);
COMMENT ON TABLE usage_event_ids IS 'Every usage event id ever stored per user, with its partition key: the append-only rule''s lookup, without probing every monthly partition.';
COMMENT ON COLUMN usage_event_ids.tenant_id IS 'Owning tenant.';
COMMENT ON COLUMN usage_event_ids.user_id IS 'Owning user.';
COMMENT ON COLUMN usage_event_ids.id IS 'The usage event''s id.';
COMMENT ON COLUMN usage_event_ids.occurred_at IS 'Its occurred_at, which locates its partition.';

-- Backfill past row-level security (forced for the owner too), then restore it.
ALTER TABLE usage_events NO FORCE ROW LEVEL SECURITY;
INSERT INTO usage_event_ids (tenant_id, user_id, id, occurred_at)
SELECT tenant_id, user_id, id, min(occurred_at) FROM usage_events GROUP BY tenant_id, user_id, id;
ALTER TABLE usage_events FORCE ROW LEVEL SECURITY;

ALTER TABLE usage_event_ids ENABLE ROW LEVEL SECURITY;
ALTER TABLE usage_event_ids FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON usage_event_ids USING (habitsync_row_visible(tenant_id, user_id)) WITH CHECK (habitsync_row_visible(tenant_id, user_id));
CREATE POLICY analyst_read ON usage_event_ids FOR SELECT TO habitsync_analyst USING (true);
GRANT SELECT, INSERT, DELETE ON usage_event_ids TO habitsync_app;
GRANT SELECT ON usage_event_ids TO habitsync_analyst;
