-- Where `maintenance run` moves usage-event partitions older than the retention: detached
-- from usage_events (so pulls and writes no longer scan them) but still there for analysts.
CREATE SCHEMA archive;
COMMENT ON SCHEMA archive IS 'Detached usage_events partitions older than the retention (maintenance run); read-only history for analysts.';
