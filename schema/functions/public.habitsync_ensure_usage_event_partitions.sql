-- public.habitsync_ensure_usage_event_partitions(from_month date, to_month date)
-- Creates the monthly usage_events partitions from from_month to to_month that do not exist yet; returns how many it created.

CREATE OR REPLACE FUNCTION public.habitsync_ensure_usage_event_partitions(from_month date, to_month date)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
DECLARE
    month date := date_trunc('month', from_month)::date;
    created integer := 0;
    partition_name text;
BEGIN
    WHILE month <= to_month LOOP
        partition_name := format('usage_events_%s', to_char(month, 'YYYY_MM'));
        IF to_regclass(partition_name) IS NULL THEN
            -- Bounds spelled with an explicit +00 offset: independent of the session's TimeZone.
            EXECUTE format('CREATE TABLE %I PARTITION OF usage_events FOR VALUES FROM (%L) TO (%L)',
                           partition_name, to_char(month, 'YYYY-MM-DD') || ' 00:00:00+00',
                           to_char((month + interval '1 month')::date, 'YYYY-MM-DD') || ' 00:00:00+00');
            PERFORM habitsync_secure_usage_event_partition(partition_name, format('usage_events rows of %s (UTC month).', to_char(month, 'YYYY-MM')));
            created := created + 1;
        END IF;
        month := (month + interval '1 month')::date;
    END LOOP;
    RETURN created;
END
$function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
