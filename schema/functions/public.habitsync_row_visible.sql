-- public.habitsync_row_visible(row_tenant_id uuid, row_user_id text)
-- Row-level security predicate for per-user tables: the row belongs to the current tenant and to the current user (habitsync.user_id); every user of the tenant only when no user is set and habitsync.scope is 'tenant' (maintenance, admin commands). An empty or missing user otherwise sees nothing.

CREATE OR REPLACE FUNCTION public.habitsync_row_visible(row_tenant_id uuid, row_user_id text)
 RETURNS boolean
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$
        SELECT row_tenant_id = habitsync_current_tenant_id()
           AND (row_user_id = habitsync_current_user_id()
                OR (habitsync_current_user_id() IS NULL AND current_setting('habitsync.scope', true) = 'tenant'))
    $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
