-- public.habitsync_secure_usage_event_partition(partition_name text, description text)
-- Enables and forces row-level security on a usage_events partition and copies the parent's comments.

CREATE OR REPLACE FUNCTION public.habitsync_secure_usage_event_partition(partition_name text, description text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    parent_column record;
BEGIN
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', partition_name);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', partition_name);
    EXECUTE format('CREATE POLICY tenant_isolation ON %I USING (habitsync_row_visible(tenant_id, user_id)) WITH CHECK (habitsync_row_visible(tenant_id, user_id))', partition_name);
    EXECUTE format('CREATE POLICY analyst_read ON %I FOR SELECT TO habitsync_analyst USING (true)', partition_name);
    EXECUTE format('GRANT SELECT ON %I TO habitsync_analyst', partition_name);
    EXECUTE format('COMMENT ON TABLE %I IS %L', partition_name, description);
    FOR parent_column IN
        SELECT a.attname, col_description('usage_events'::regclass, a.attnum) AS comment
        FROM pg_attribute a
        WHERE a.attrelid = 'usage_events'::regclass AND a.attnum > 0 AND NOT a.attisdropped
    LOOP
        EXECUTE format('COMMENT ON COLUMN %I.%I IS %L', partition_name, parent_column.attname, parent_column.comment);
    END LOOP;
END
$function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
