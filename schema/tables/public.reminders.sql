-- public.reminders
-- reminders collection (ReminderModel): local notification times of a habit. Last-writer-wins.

CREATE TABLE public.reminders (
    -- Owning tenant.
    tenant_id uuid NOT NULL,
    -- Owning user.
    user_id text NOT NULL,
    -- Record id.
    id uuid NOT NULL,
    -- The habit reminded of (same user).
    habit_id uuid,
    -- Wire time (HH:mm): local time of day of the reminder.
    time_of_day time(0) without time zone,
    -- Whether the reminder fires; default true.
    is_active boolean,
    -- The device's notification identifier, if any.
    notification_identifier text,
    -- LWW key, part 1.
    updated_at timestamp(3) with time zone NOT NULL,
    -- LWW key, part 2: device id or 'server' (cascaded deletes).
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
ALTER TABLE public.reminders ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.reminders FORCE ROW LEVEL SECURITY;

-- Constraints
ALTER TABLE public.reminders ADD CONSTRAINT reminders_field_times_check CHECK ((jsonb_typeof(field_times) = 'object'::text));
ALTER TABLE public.reminders ADD CONSTRAINT reminders_live_fields CHECK (((deleted_at IS NOT NULL) OR ((habit_id IS NOT NULL) AND (time_of_day IS NOT NULL) AND (is_active IS NOT NULL))));
ALTER TABLE public.reminders ADD CONSTRAINT reminders_notification_identifier_check CHECK ((char_length(notification_identifier) <= 200));
ALTER TABLE public.reminders ADD CONSTRAINT reminders_pkey PRIMARY KEY (tenant_id, user_id, id);
ALTER TABLE public.reminders ADD CONSTRAINT reminders_server_version_check CHECK ((server_version > 0));
ALTER TABLE public.reminders ADD CONSTRAINT reminders_tenant_id_user_id_fkey FOREIGN KEY (tenant_id, user_id) REFERENCES users(tenant_id, user_id) ON DELETE CASCADE;
ALTER TABLE public.reminders ADD CONSTRAINT reminders_tenant_id_user_id_habit_id_fkey FOREIGN KEY (tenant_id, user_id, habit_id) REFERENCES habits(tenant_id, user_id, id);
ALTER TABLE public.reminders ADD CONSTRAINT reminders_time_of_day_check CHECK ((EXTRACT(second FROM time_of_day) = (0)::numeric));
ALTER TABLE public.reminders ADD CONSTRAINT reminders_updated_by_check CHECK (((char_length(updated_by) >= 1) AND (char_length(updated_by) <= 100)));

-- Indexes
CREATE INDEX reminders_by_habit ON public.reminders USING btree (tenant_id, user_id, habit_id);
CREATE UNIQUE INDEX reminders_pull ON public.reminders USING btree (tenant_id, user_id, server_version);

-- Triggers
CREATE TRIGGER record_digest_after_delete AFTER DELETE ON public.reminders REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION habitsync_record_digest_after_insert_or_delete('reminders', 'tombstones');
CREATE TRIGGER record_digest_after_insert AFTER INSERT ON public.reminders REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION habitsync_record_digest_after_insert_or_delete('reminders', 'tombstones');
CREATE TRIGGER record_digest_after_update AFTER UPDATE ON public.reminders REFERENCING OLD TABLE AS updated_old NEW TABLE AS updated_new FOR EACH STATEMENT EXECUTE FUNCTION habitsync_record_digest_after_update('reminders', 'tombstones');

-- Policies
CREATE POLICY analyst_read ON public.reminders AS PERMISSIVE FOR SELECT TO habitsync_analyst
    USING (true);
CREATE POLICY tenant_isolation ON public.reminders AS PERMISSIVE FOR ALL TO public
    USING (habitsync_row_visible(tenant_id, user_id))
    WITH CHECK (habitsync_row_visible(tenant_id, user_id));

-- Privileges
GRANT SELECT ON public.reminders TO habitsync_analyst;
GRANT DELETE, INSERT, SELECT, UPDATE ON public.reminders TO habitsync_app;
