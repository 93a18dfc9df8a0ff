-- Hardening (issue 9).
--
-- 1. Row-level security fails closed. Until now an empty or missing habitsync.user_id meant
--    "the whole tenant", so anything that set the user to '' (a token whose subject was a NUL
--    byte, cut short by libpq) widened what a request could see. Tenant-wide work must now
--    say so explicitly with habitsync.scope = 'tenant'; without it, no user means no rows.
CREATE OR REPLACE FUNCTION habitsync_row_visible(row_tenant_id uuid, row_user_id text) RETURNS boolean
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
        SELECT row_tenant_id = habitsync_current_tenant_id()
           AND (row_user_id = habitsync_current_user_id()
                OR (habitsync_current_user_id() IS NULL AND current_setting('habitsync.scope', true) = 'tenant'))
    $$;
COMMENT ON FUNCTION habitsync_row_visible(uuid, text) IS 'Row-level security predicate for per-user tables: the row belongs to the current tenant and to the current user (habitsync.user_id); every user of the tenant only when no user is set and habitsync.scope is ''tenant'' (maintenance, admin commands). An empty or missing user otherwise sees nothing.';

COMMENT ON FUNCTION habitsync_current_user_id() IS 'The user of the current transaction (habitsync.user_id); NULL when unset, which shows no per-user rows unless habitsync.scope is ''tenant''.';

-- 2. Usage events that landed in the DEFAULT partition (no monthly partition covered their
--    month) are moved into their month's partition, created for the purpose, or into the
--    archived table of that month. Without this, creating that month's partition fails
--    ("updated partition constraint for default partition would be violated") and partition
--    upkeep stops for everyone. Runs inside maintenance's transaction.
CREATE FUNCTION habitsync_move_default_usage_events() RETURNS integer
    LANGUAGE plpgsql
    AS $$
DECLARE
    month date;
    moved integer := 0;
    count_moved integer;
    partition_name text;
    lower_bound text;
    upper_bound text;
BEGIN
    -- The owner is subject to the forced policies too, and this is upkeep across tenants:
    -- lift them for the tables touched, inside this transaction only.
    ALTER TABLE usage_events_default NO FORCE ROW LEVEL SECURITY;
    FOR month IN
        SELECT DISTINCT date_trunc('month', occurred_at AT TIME ZONE 'UTC')::date FROM usage_events_default ORDER BY 1
    LOOP
        partition_name := format('usage_events_%s', to_char(month, 'YYYY_MM'));
        lower_bound := to_char(month, 'YYYY-MM-DD') || ' 00:00:00+00';
        upper_bound := to_char((month + interval '1 month')::date, 'YYYY-MM-DD') || ' 00:00:00+00';
        IF to_regclass(format('archive.%I', partition_name)) IS NOT NULL THEN
            -- The month was archived already: late rows join it there.
            EXECUTE format('ALTER TABLE archive.%I NO FORCE ROW LEVEL SECURITY', partition_name);
            EXECUTE format('WITH m AS (DELETE FROM usage_events_default WHERE occurred_at >= %L AND occurred_at < %L RETURNING *) INSERT INTO archive.%I SELECT * FROM m',
                           lower_bound, upper_bound, partition_name);
            GET DIAGNOSTICS count_moved = ROW_COUNT;
            EXECUTE format('ALTER TABLE archive.%I FORCE ROW LEVEL SECURITY', partition_name);
        ELSE
            EXECUTE format('CREATE TABLE %I (LIKE usage_events INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', partition_name);
            EXECUTE format('WITH m AS (DELETE FROM usage_events_default WHERE occurred_at >= %L AND occurred_at < %L RETURNING *) INSERT INTO %I SELECT * FROM m',
                           lower_bound, upper_bound, partition_name);
            GET DIAGNOSTICS count_moved = ROW_COUNT;
            EXECUTE format('ALTER TABLE usage_events ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', partition_name, lower_bound, upper_bound);
            PERFORM habitsync_secure_usage_event_partition(partition_name, format('usage_events rows of %s (UTC month).', to_char(month, 'YYYY-MM')));
        END IF;
        moved := moved + count_moved;
    END LOOP;
    ALTER TABLE usage_events_default FORCE ROW LEVEL SECURITY;
    RETURN moved;
END
$$;
COMMENT ON FUNCTION habitsync_move_default_usage_events() IS 'Moves usage_events rows out of the DEFAULT partition into their month''s partition (creating it) or into archive.usage_events_YYYY_MM when that month was archived; returns how many rows moved. Called by maintenance run before partitions are created ahead.';
