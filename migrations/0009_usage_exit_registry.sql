-- The usage streak counts days with a conscious exit (exit_to_focus). It read them from
-- usage_events, so when maintenance moved a month to the archive schema, that month's exits
-- dropped out and a long streak broke. The id registry keeps every event forever and is
-- unpartitioned: it now also says which events are exits, and the streak reads it.
ALTER TABLE usage_event_ids ADD COLUMN is_exit boolean NOT NULL DEFAULT false;
COMMENT ON COLUMN usage_event_ids.is_exit IS 'Whether the event is an exit_to_focus (a conscious exit), which the usage streak counts; kept when the event''s month is archived.';

-- Backfill past row-level security (forced for the owner too), then restore it, from the
-- live partitions and from every archived month.
ALTER TABLE usage_event_ids NO FORCE ROW LEVEL SECURITY;
ALTER TABLE usage_events NO FORCE ROW LEVEL SECURITY;
UPDATE usage_event_ids r SET is_exit = true
FROM usage_events e
WHERE e.tenant_id = r.tenant_id AND e.user_id = r.user_id AND e.id = r.id AND e.event_type = 'exit_to_focus';
DO $$
DECLARE
    archived record;
BEGIN
    FOR archived IN
        SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'archive' AND c.relkind = 'r' AND c.relname ~ '^usage_events_[0-9]{4}_[0-9]{2}$'
    LOOP
        EXECUTE format('ALTER TABLE archive.%I NO FORCE ROW LEVEL SECURITY', archived.relname);
        EXECUTE format('UPDATE usage_event_ids r SET is_exit = true FROM archive.%I e
                        WHERE e.tenant_id = r.tenant_id AND e.user_id = r.user_id AND e.id = r.id AND e.event_type = ''exit_to_focus''', archived.relname);
        EXECUTE format('ALTER TABLE archive.%I FORCE ROW LEVEL SECURITY', archived.relname);
    END LOOP;
END
$$;
ALTER TABLE usage_events FORCE ROW LEVEL SECURITY;
ALTER TABLE usage_event_ids FORCE ROW LEVEL SECURITY;

-- Pushes now set is_exit on insert; the request role updates nothing here.
