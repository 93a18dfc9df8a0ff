-- public.habitsync_erase(p_tenant uuid, p_user text, p_dry_run boolean)
-- Erases (or counts, with p_dry_run) every row of a user, or with p_user NULL of a whole tenant, in every table habitsync_user_tables() finds; returns the rows per table. Runs only inside a request scope that covers it.

CREATE OR REPLACE FUNCTION public.habitsync_erase(p_tenant uuid, p_user text, p_dry_run boolean)
 RETURNS TABLE(table_name text, row_count bigint)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'public', 'pg_catalog'
AS $function$
    DECLARE
        t record;
        n bigint;
        counts jsonb := '{}'::jsonb;
        filter text := CASE WHEN p_user IS NULL THEN 'tenant_id = $1' ELSE 'tenant_id = $1 AND user_id = $2' END;
        tables regclass[];
    BEGIN
        PERFORM habitsync_assert_erasure_scope(p_tenant, p_user);
        SELECT array_agg(u.relation ORDER BY u.referenced, u.label, u.relation::text) INTO tables
        FROM habitsync_user_tables() u WHERE u.relation <> 'users'::regclass;
        FOR t IN SELECT u.relation, u.label FROM habitsync_user_tables() u LOOP
            EXECUTE format('SELECT count(*) FROM %s WHERE %s', t.relation, filter) INTO n USING p_tenant, p_user;
            IF n > 0 THEN
                counts := jsonb_set(counts, ARRAY[t.label], to_jsonb(coalesce((counts ->> t.label)::bigint, 0) + n));
            END IF;
        END LOOP;
        IF p_user IS NULL THEN
            SELECT count(*) INTO n FROM tenant_keys k WHERE k.tenant_id = p_tenant;
            counts := counts || jsonb_build_object('tenant_keys', n);
            SELECT count(*) INTO n FROM erased_users e WHERE e.tenant_id = p_tenant;
            IF n > 0 THEN counts := counts || jsonb_build_object('erased_users', n); END IF;
            SELECT count(*) INTO n FROM tenants x WHERE x.id = p_tenant;
            counts := counts || jsonb_build_object('tenants', n);
        END IF;
        IF NOT p_dry_run THEN
            FOR i IN 1 .. coalesce(array_length(tables, 1), 0) LOOP
                EXECUTE format('DELETE FROM %s WHERE %s', tables[i], filter) USING p_tenant, p_user;
            END LOOP;
            EXECUTE 'DELETE FROM users WHERE ' || filter USING p_tenant, p_user;
            IF p_user IS NULL THEN
                DELETE FROM tenant_keys k WHERE k.tenant_id = p_tenant;
                DELETE FROM erased_users e WHERE e.tenant_id = p_tenant;
                DELETE FROM erasure_keys e WHERE e.tenant_id = p_tenant;
                DELETE FROM tenants x WHERE x.id = p_tenant;
            END IF;
        END IF;
        RETURN QUERY SELECT key, value::bigint FROM jsonb_each_text(counts) ORDER BY key;
    END
    $function$

-- Privileges
GRANT EXECUTE ON FUNCTION public.habitsync_erase(p_tenant uuid, p_user text, p_dry_run boolean) TO habitsync_app;
