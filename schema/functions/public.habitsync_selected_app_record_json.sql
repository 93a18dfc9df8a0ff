-- public.habitsync_selected_app_record_json(s selected_apps)
-- A selected_apps row as its wire record, as JSON text (the same value as habitsync_selected_app_record).

CREATE OR REPLACE FUNCTION public.habitsync_selected_app_record_json(s selected_apps)
 RETURNS text
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$
        SELECT concat(
            '{"appName":', habitsync_json_text(s.app_name),
            ',"iconName":', habitsync_json_text(s.icon_name),
            ',"urlScheme":', habitsync_json_text(s.url_scheme),
            ',"isInstalled":', habitsync_json_bool(s.is_installed),
            ',"dateAdded":', habitsync_json_time(s.date_added),
            ',"orderIndex":', habitsync_json_integer(s.order_index), '}')
    $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
