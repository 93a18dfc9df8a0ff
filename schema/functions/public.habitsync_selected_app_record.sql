-- public.habitsync_selected_app_record(s selected_apps)
-- A selected_apps row as its wire record.

CREATE OR REPLACE FUNCTION public.habitsync_selected_app_record(s selected_apps)
 RETURNS jsonb
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$
        SELECT jsonb_build_object(
            'appName', s.app_name, 'iconName', s.icon_name, 'urlScheme', s.url_scheme, 'isInstalled', s.is_installed,
            'dateAdded', habitsync_wire_time(s.date_added), 'orderIndex', s.order_index)
    $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
