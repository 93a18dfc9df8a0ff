-- habitsync:no-transaction
-- A habit's place in the user's list (issue 48's demonstration field: a field a user wants,
-- added end to end). Wire `sortOrder`: a whole number from 0, or null for the app's own
-- order; merged field by field like the habit's other fields.
--
-- The column is nullable with no default, so adding it rewrites nothing. Its CHECK is added
-- NOT VALID and validated in a statement of its own, which reads the table without blocking
-- pushes (checked at once, it would read the table under the ACCESS EXCLUSIVE lock of the
-- ALTER). Each statement commits alone; re-runnable: the column only if missing, the
-- constraint dropped and added again, the functions replaced.
-- squawk assumes every file runs in a transaction (.squawk.toml); this one does not (marker above).
ALTER TABLE habits ADD COLUMN IF NOT EXISTS sort_order integer;
-- Re-runnable: the constraint is this file's own.
-- squawk-ignore ban-drop-constraint
ALTER TABLE habits DROP CONSTRAINT IF EXISTS habits_sort_order_check;
ALTER TABLE habits ADD CONSTRAINT habits_sort_order_check CHECK (sort_order >= 0) NOT VALID;
-- Its own transaction (no-transaction file), as the rule asks.
-- squawk-ignore constraint-missing-not-valid
ALTER TABLE habits VALIDATE CONSTRAINT habits_sort_order_check;
COMMENT ON COLUMN habits.sort_order IS 'Wire sortOrder: the habit''s place in the user''s list, 0 first; NULL for the app''s own order.';

CREATE OR REPLACE FUNCTION habitsync_habit_record(h habits) RETURNS jsonb
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
        SELECT jsonb_build_object(
            'name', h.name, 'habitDescription', h.habit_description, 'icon', h.icon, 'color', h.color,
            'habitType', h.habit_type, 'goalCount', h.goal_count, 'goalUnit', h.goal_unit,
            'schedule', jsonb_strip_nulls(jsonb_build_object('type', h.schedule_type, 'n', h.schedule_n, 'weekdays', to_jsonb(h.schedule_weekdays))),
            'baselineCount', h.baseline_count, 'baselineUnit', h.baseline_unit,
            'startDate', habitsync_wire_date(h.start_date), 'endDate', habitsync_wire_date(h.end_date),
            'createdAt', habitsync_wire_time(h.created_at), 'sortOrder', h.sort_order)
    $$;

CREATE OR REPLACE FUNCTION habitsync_habit_record_json(h habits) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
        SELECT concat(
            '{"name":', habitsync_json_text(h.name),
            ',"habitDescription":', habitsync_json_text(h.habit_description),
            ',"icon":', habitsync_json_text(h.icon),
            ',"color":', habitsync_json_text(h.color),
            ',"habitType":', habitsync_json_text(h.habit_type),
            ',"goalCount":', habitsync_json_integer(h.goal_count),
            ',"goalUnit":', habitsync_json_text(h.goal_unit),
            ',"schedule":', '{"type":', habitsync_json_text(h.schedule_type), ',"n":' || h.schedule_n::text, ',"weekdays":' || to_json(h.schedule_weekdays)::text, '}',
            ',"baselineCount":', habitsync_json_integer(h.baseline_count),
            ',"baselineUnit":', habitsync_json_text(h.baseline_unit),
            ',"startDate":', habitsync_json_date(h.start_date),
            ',"endDate":', habitsync_json_date(h.end_date),
            ',"createdAt":', habitsync_json_time(h.created_at),
            ',"sortOrder":', habitsync_json_integer(h.sort_order), '}')
    $$;
