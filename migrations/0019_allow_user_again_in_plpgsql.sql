-- habitsync_allow_user_again (0013) was one SQL statement whose DELETE compared the marker with
-- a call of habitsync_erased_user_hash. Citus cannot plan that on a reference table ("could not
-- create distributed plan"): it does not inline the call into a router plan. In PL/pgSQL the
-- hash is computed first and the DELETE compares a value, which both PostgreSQL and Citus run.
-- Same signature, same answer (true when there was a marker), same privileges (admins only).
CREATE OR REPLACE FUNCTION habitsync_allow_user_again(p_tenant uuid, p_user text) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_catalog
    AS $$
    DECLARE
        marker bytea := habitsync_erased_user_hash(p_tenant, p_user);
        removed bigint;
    BEGIN
        DELETE FROM erased_users WHERE tenant_id = p_tenant AND user_hash = marker;
        GET DIAGNOSTICS removed = ROW_COUNT;
        RETURN removed > 0;
    END
    $$;
