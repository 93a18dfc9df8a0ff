-- public.selected_apps
-- selectedApps collection (SelectedApp, seed 002): apps the mindful gateway stands in front of. Last-writer-wins.

CREATE TABLE public.selected_apps (
    -- Owning tenant.
    tenant_id uuid NOT NULL,
    -- Owning user.
    user_id text NOT NULL,
    -- Record id.
    id uuid NOT NULL,
    -- Display name of the app.
    app_name text,
    -- Icon name, non-empty.
    icon_name text,
    -- URL scheme that opens the app, such as instagram://.
    url_scheme text,
    -- Whether the app is installed; default true.
    is_installed boolean,
    -- When the user added it.
    date_added timestamp(3) with time zone,
    -- Position in the user's list, ≥ 0.
    order_index integer,
    -- LWW key, part 1.
    updated_at timestamp(3) with time zone NOT NULL,
    -- LWW key, part 2.
    updated_by text NOT NULL,
    -- Per-user change number of the latest write.
    server_version bigint NOT NULL,
    -- Server time the winning write was accepted.
    synced_at timestamp with time zone DEFAULT now() NOT NULL,
    -- Tombstone.
    deleted_at timestamp with time zone,
    -- LWW keys of the fields set before the record's own key: {"field": [time, device]} (null: a default nobody set); a field not named has (updated_at, updated_by). NULL: every field has it. {} on a tombstone: no field was ever written (a delete of a record the server had not seen).
    field_times jsonb
);
ALTER TABLE public.selected_apps ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.selected_apps FORCE ROW LEVEL SECURITY;

-- Constraints
ALTER TABLE public.selected_apps ADD CONSTRAINT selected_apps_app_name_check CHECK (((char_length(btrim(app_name)) >= 1) AND (char_length(btrim(app_name)) <= 200)));
ALTER TABLE public.selected_apps ADD CONSTRAINT selected_apps_field_times_check CHECK ((jsonb_typeof(field_times) = 'object'::text));
ALTER TABLE public.selected_apps ADD CONSTRAINT selected_apps_icon_name_check CHECK (((char_length(icon_name) >= 1) AND (char_length(icon_name) <= 200)));
ALTER TABLE public.selected_apps ADD CONSTRAINT selected_apps_live_fields CHECK (((deleted_at IS NOT NULL) OR ((app_name IS NOT NULL) AND (icon_name IS NOT NULL) AND (url_scheme IS NOT NULL) AND (is_installed IS NOT NULL) AND (date_added IS NOT NULL) AND (order_index IS NOT NULL))));
ALTER TABLE public.selected_apps ADD CONSTRAINT selected_apps_order_index_check CHECK ((order_index >= 0));
ALTER TABLE public.selected_apps ADD CONSTRAINT selected_apps_pkey PRIMARY KEY (tenant_id, user_id, id);
ALTER TABLE public.selected_apps ADD CONSTRAINT selected_apps_server_version_check CHECK ((server_version > 0));
ALTER TABLE public.selected_apps ADD CONSTRAINT selected_apps_tenant_id_user_id_fkey FOREIGN KEY (tenant_id, user_id) REFERENCES users(tenant_id, user_id) ON DELETE CASCADE;
ALTER TABLE public.selected_apps ADD CONSTRAINT selected_apps_updated_by_check CHECK (((char_length(updated_by) >= 1) AND (char_length(updated_by) <= 100)));
ALTER TABLE public.selected_apps ADD CONSTRAINT selected_apps_url_scheme_check CHECK (((url_scheme ~ '^[A-Za-z][A-Za-z0-9+.-]*://[^[:space:]]*$'::text) AND (char_length(url_scheme) <= 500)));

-- Indexes
CREATE UNIQUE INDEX selected_apps_pull ON public.selected_apps USING btree (tenant_id, user_id, server_version);

-- Triggers
CREATE TRIGGER record_digest_after_delete AFTER DELETE ON public.selected_apps REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION habitsync_record_digest_after_insert_or_delete('selectedApps', 'tombstones');
CREATE TRIGGER record_digest_after_insert AFTER INSERT ON public.selected_apps REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION habitsync_record_digest_after_insert_or_delete('selectedApps', 'tombstones');
CREATE TRIGGER record_digest_after_update AFTER UPDATE ON public.selected_apps REFERENCING OLD TABLE AS updated_old NEW TABLE AS updated_new FOR EACH STATEMENT EXECUTE FUNCTION habitsync_record_digest_after_update('selectedApps', 'tombstones');

-- Policies
CREATE POLICY analyst_read ON public.selected_apps AS PERMISSIVE FOR SELECT TO habitsync_analyst
    USING (true);
CREATE POLICY tenant_isolation ON public.selected_apps AS PERMISSIVE FOR ALL TO public
    USING (habitsync_row_visible(tenant_id, user_id))
    WITH CHECK (habitsync_row_visible(tenant_id, user_id));

-- Privileges
GRANT SELECT ON public.selected_apps TO habitsync_analyst;
GRANT DELETE, INSERT, SELECT, UPDATE ON public.selected_apps TO habitsync_app;
