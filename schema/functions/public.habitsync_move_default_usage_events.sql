-- public.habitsync_move_default_usage_events()
-- Moves usage_events rows out of the DEFAULT partition into their month's partition (creating it) or into archive.usage_events_YYYY_MM when that month was archived; returns how many rows moved. Called by maintenance run before partitions are created ahead.

CREATE OR REPLACE FUNCTION public.habitsync_move_default_usage_events()
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
DECLARE
    month date;
    moved integer := 0;
    count_moved integer;
    partition_name text;
    lower_bound text;
    upper_bound text;
    on_citus boolean := EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus');
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
            IF on_citus THEN
                -- On a distributed usage_events, attaching made the month a distributed table
                -- and copied its rows into the shards; the coordinator's own copy would stay
                -- on disk, read by nothing. (Not yet distributed: the rows are the table's.)
                IF EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = format('%I', partition_name)::regclass) THEN
                    PERFORM truncate_local_data_after_distributing_table(format('%I', partition_name)::regclass);
                END IF;
            END IF;
        END IF;
        moved := moved + count_moved;
    END LOOP;
    ALTER TABLE usage_events_default FORCE ROW LEVEL SECURITY;
    RETURN moved;
END
$function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
