-- analytics.user_focus_stats(p_tenant uuid, p_user text)
-- analytics.focus_stats of one user, reading only that user's sessions; the stats API's /v1/stats/focus.

CREATE OR REPLACE FUNCTION analytics.user_focus_stats(p_tenant uuid, p_user text)
 RETURNS SETOF analytics.focus_stats
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
    definition text := pg_get_viewdef('analytics.focus_stats'::regclass, true);
    anchor constant text := 'WHERE f.deleted_at IS NULL';
    scoped text;
BEGIN
    IF p_tenant IS NULL OR p_user IS NULL THEN
        RAISE EXCEPTION 'analytics.user_focus_stats needs a tenant and a user' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF array_length(string_to_array(definition, anchor), 1) IS DISTINCT FROM 2 THEN
        RAISE EXCEPTION 'analytics.focus_stats no longer reads its sessions "%"; update analytics.user_focus_stats', anchor
            USING ERRCODE = 'feature_not_supported';
    END IF;
    scoped := replace(definition, anchor, format('%s AND f.tenant_id = %L AND f.user_id = %L', anchor, p_tenant, p_user));
    RETURN QUERY EXECUTE rtrim(scoped, E'; \n');
END
$function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
