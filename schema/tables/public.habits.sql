-- public.habits
-- habits collection (HabitModel): what a user builds or breaks. Last-writer-wins; deleted_at marks a tombstone.

CREATE TABLE public.habits (
    -- Owning tenant.
    tenant_id uuid NOT NULL,
    -- Owning user.
    user_id text NOT NULL,
    -- Record id (UUID chosen by the device).
    id uuid NOT NULL,
    -- Name, 1–200 characters after trimming.
    name text,
    -- Wire habitDescription; up to 2000 characters, default empty.
    habit_description text,
    -- Icon name, up to 100 characters, default empty.
    icon text,
    -- Colour as #RRGGBB or #RRGGBBAA; NULL for the app default.
    color text,
    -- formation (goal is a minimum) or breaking (goal is a ceiling).
    habit_type text,
    -- Daily goal amount, > 0.
    goal_count integer,
    -- Unit of the goal (times, minutes…), 1–50 characters.
    goal_unit text,
    -- daily, everyNDays, specificWeekdays, frequencyWeekly or frequencyMonthly.
    schedule_type text,
    -- N of everyNDays (≥ 1), frequencyWeekly (1–7) or frequencyMonthly (1–31); NULL otherwise.
    schedule_n integer,
    -- Weekday names (sunday…saturday) of a specificWeekdays schedule; NULL otherwise.
    schedule_weekdays text[],
    -- Starting amount of a breaking habit; required for breaking habits and greater than goal_count.
    baseline_count integer,
    -- Unit of baseline_count.
    baseline_unit text,
    -- First calendar day (user's time zone) the habit applies.
    start_date date,
    -- Last calendar day, or NULL for open-ended; ≥ start_date.
    end_date date,
    -- When the habit was created (device time, or the server time of the first write).
    created_at timestamp with time zone,
    -- LWW key, part 1: the winning write's updatedAt (millisecond precision).
    updated_at timestamp(3) with time zone NOT NULL,
    -- LWW key, part 2: the winning write's device id, or 'server'.
    updated_by text NOT NULL,
    -- Per-user change number of the latest write; pull returns changes in this order.
    server_version bigint NOT NULL,
    -- Server time the winning write was accepted.
    synced_at timestamp with time zone DEFAULT now() NOT NULL,
    -- Tombstone: when set the habit is deleted (its reminders and progress are tombstoned too).
    deleted_at timestamp with time zone,
    -- LWW keys of the fields set before the record's own key: {"field": [time, device]} (null: a default nobody set); a field not named has (updated_at, updated_by). NULL: every field has it. {} on a tombstone: no field was ever written (a delete of a record the server had not seen).
    field_times jsonb,
    -- Wire sortOrder: the habit's place in the user's list, 0 first; NULL for the app's own order.
    sort_order integer
);
ALTER TABLE public.habits ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.habits FORCE ROW LEVEL SECURITY;

-- Constraints
ALTER TABLE public.habits ADD CONSTRAINT habits_baseline_unit_check CHECK ((char_length(baseline_unit) <= 50));
ALTER TABLE public.habits ADD CONSTRAINT habits_breaking_baseline CHECK (((habit_type IS DISTINCT FROM 'breaking'::text) OR ((baseline_count IS NOT NULL) AND (baseline_count > goal_count))));
ALTER TABLE public.habits ADD CONSTRAINT habits_color_check CHECK ((color ~ '^#[0-9A-Fa-f]{6}([0-9A-Fa-f]{2})?$'::text));
ALTER TABLE public.habits ADD CONSTRAINT habits_date_range CHECK (((end_date IS NULL) OR (end_date >= start_date)));
ALTER TABLE public.habits ADD CONSTRAINT habits_field_times_check CHECK ((jsonb_typeof(field_times) = 'object'::text));
ALTER TABLE public.habits ADD CONSTRAINT habits_goal_count_check CHECK ((goal_count > 0));
ALTER TABLE public.habits ADD CONSTRAINT habits_goal_unit_check CHECK (((char_length(goal_unit) >= 1) AND (char_length(goal_unit) <= 50)));
ALTER TABLE public.habits ADD CONSTRAINT habits_habit_description_check CHECK ((char_length(habit_description) <= 2000));
ALTER TABLE public.habits ADD CONSTRAINT habits_habit_type_check CHECK ((habit_type = ANY (ARRAY['formation'::text, 'breaking'::text])));
ALTER TABLE public.habits ADD CONSTRAINT habits_icon_check CHECK ((char_length(icon) <= 100));
ALTER TABLE public.habits ADD CONSTRAINT habits_live_fields CHECK (((deleted_at IS NOT NULL) OR ((name IS NOT NULL) AND (habit_description IS NOT NULL) AND (icon IS NOT NULL) AND (habit_type IS NOT NULL) AND (goal_count IS NOT NULL) AND (goal_unit IS NOT NULL) AND (schedule_type IS NOT NULL) AND (start_date IS NOT NULL) AND (created_at IS NOT NULL))));
ALTER TABLE public.habits ADD CONSTRAINT habits_name_check CHECK (((char_length(btrim(name)) >= 1) AND (char_length(btrim(name)) <= 200)));
ALTER TABLE public.habits ADD CONSTRAINT habits_pkey PRIMARY KEY (tenant_id, user_id, id);
ALTER TABLE public.habits ADD CONSTRAINT habits_schedule CHECK (((schedule_type IS NULL) OR COALESCE(
CASE schedule_type
    WHEN 'daily'::text THEN ((schedule_n IS NULL) AND (schedule_weekdays IS NULL))
    WHEN 'everyNDays'::text THEN ((schedule_n >= 1) AND (schedule_weekdays IS NULL))
    WHEN 'specificWeekdays'::text THEN ((schedule_n IS NULL) AND (schedule_weekdays IS NOT NULL) AND habitsync_valid_weekdays(schedule_weekdays))
    WHEN 'frequencyWeekly'::text THEN (((schedule_n >= 1) AND (schedule_n <= 7)) AND (schedule_weekdays IS NULL))
    WHEN 'frequencyMonthly'::text THEN (((schedule_n >= 1) AND (schedule_n <= 31)) AND (schedule_weekdays IS NULL))
    ELSE NULL::boolean
END, false)));
ALTER TABLE public.habits ADD CONSTRAINT habits_schedule_type_check CHECK ((schedule_type = ANY (ARRAY['daily'::text, 'everyNDays'::text, 'specificWeekdays'::text, 'frequencyWeekly'::text, 'frequencyMonthly'::text])));
ALTER TABLE public.habits ADD CONSTRAINT habits_server_version_check CHECK ((server_version > 0));
ALTER TABLE public.habits ADD CONSTRAINT habits_sort_order_check CHECK ((sort_order >= 0));
ALTER TABLE public.habits ADD CONSTRAINT habits_tenant_id_user_id_fkey FOREIGN KEY (tenant_id, user_id) REFERENCES users(tenant_id, user_id) ON DELETE CASCADE;
ALTER TABLE public.habits ADD CONSTRAINT habits_updated_by_check CHECK (((char_length(updated_by) >= 1) AND (char_length(updated_by) <= 100)));

-- Indexes
CREATE UNIQUE INDEX habits_pull ON public.habits USING btree (tenant_id, user_id, server_version);

-- Triggers
CREATE TRIGGER habit_months_after_delete AFTER DELETE ON public.habits REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION habitsync_habit_months_after_insert_or_delete();
CREATE TRIGGER habit_months_after_insert AFTER INSERT ON public.habits REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION habitsync_habit_months_after_insert_or_delete();
CREATE TRIGGER habit_months_after_update AFTER UPDATE ON public.habits REFERENCING OLD TABLE AS updated_old NEW TABLE AS updated_new FOR EACH STATEMENT EXECUTE FUNCTION habitsync_habit_months_after_update();
CREATE TRIGGER record_digest_after_delete AFTER DELETE ON public.habits REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION habitsync_record_digest_after_insert_or_delete('habits', 'tombstones');
CREATE TRIGGER record_digest_after_insert AFTER INSERT ON public.habits REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION habitsync_record_digest_after_insert_or_delete('habits', 'tombstones');
CREATE TRIGGER record_digest_after_update AFTER UPDATE ON public.habits REFERENCING OLD TABLE AS updated_old NEW TABLE AS updated_new FOR EACH STATEMENT EXECUTE FUNCTION habitsync_record_digest_after_update('habits', 'tombstones');

-- Policies
CREATE POLICY analyst_read ON public.habits AS PERMISSIVE FOR SELECT TO habitsync_analyst
    USING (true);
CREATE POLICY tenant_isolation ON public.habits AS PERMISSIVE FOR ALL TO public
    USING (habitsync_row_visible(tenant_id, user_id))
    WITH CHECK (habitsync_row_visible(tenant_id, user_id));

-- Privileges
GRANT SELECT ON public.habits TO habitsync_analyst;
GRANT DELETE, INSERT, SELECT, UPDATE ON public.habits TO habitsync_app;
