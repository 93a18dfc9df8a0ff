-- Wire records rendered by concatenating text rather than building jsonb.
--
-- Pull renders every change it returns. Building a jsonb value per row and printing it cost
-- several times as much as writing the same JSON with one concat() per row (5,000 usage
-- events, execution time: about 60 ms against 16 ms on the benchmark machine), and the jsonb
-- was only ever turned into text.
-- These functions write the same JSON values as the jsonb record functions of 0003, which
-- stay as the reference for analysts; a test compares the two for every collection, and
-- checks that PostgreSQL inlines every one of them (each is a single SQL expression) into the
-- query that calls it. Keys come out in the wire documents' order.

-- JSON scalars. A NULL input is the JSON literal null, never a NULL text. All are STABLE,
-- like to_json and to_char that they call: PostgreSQL does not inline an IMMUTABLE SQL
-- function whose body is less than immutable, and a call that is not inlined costs more than
-- the rendering itself.
CREATE FUNCTION habitsync_json_text(v text) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT coalesce(to_json(v)::text, 'null') $$;
COMMENT ON FUNCTION habitsync_json_text(text) IS 'A text value as a JSON string (escaped), or null.';

CREATE FUNCTION habitsync_json_time(v timestamptz) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT coalesce('"' || to_char(v AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"', 'null') $$;
COMMENT ON FUNCTION habitsync_json_time(timestamptz) IS 'A timestamp as a JSON string in the wire format (RFC 3339, UTC, milliseconds), or null.';

CREATE FUNCTION habitsync_json_date(v date) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT coalesce('"' || to_char(v, 'YYYY-MM-DD') || '"', 'null') $$;
COMMENT ON FUNCTION habitsync_json_date(date) IS 'A calendar date as a JSON string (yyyy-MM-dd), or null.';

CREATE FUNCTION habitsync_json_bool(v boolean) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT CASE WHEN v THEN 'true' WHEN NOT v THEN 'false' ELSE 'null' END $$;
COMMENT ON FUNCTION habitsync_json_bool(boolean) IS 'A boolean as JSON true/false, or null.';

CREATE FUNCTION habitsync_json_number(v double precision) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT coalesce(v::text, 'null') $$;
COMMENT ON FUNCTION habitsync_json_number(double precision) IS 'A number as JSON (the columns hold finite values only), or null.';

CREATE FUNCTION habitsync_json_integer(v bigint) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT coalesce(v::text, 'null') $$;
COMMENT ON FUNCTION habitsync_json_integer(bigint) IS 'An integer as JSON, or null.';

CREATE FUNCTION habitsync_json_uuid(v uuid) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT coalesce('"' || v::text || '"', 'null') $$;
COMMENT ON FUNCTION habitsync_json_uuid(uuid) IS 'A UUID as a JSON string (lower case), or null.';

-- One function per collection, mirroring habitsync_<collection>_record of 0003: one concat()
-- per row (it skips NULL arguments, which is how optional keys such as a schedule's n and
-- weekdays are left out).
CREATE FUNCTION habitsync_habit_record_json(h habits) RETURNS text
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
            ',"createdAt":', habitsync_json_time(h.created_at), '}')
    $$;
COMMENT ON FUNCTION habitsync_habit_record_json(habits) IS 'A habits row as its wire record, as JSON text (the same value as habitsync_habit_record).';

CREATE FUNCTION habitsync_reminder_record_json(r reminders) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
        SELECT concat(
            '{"habitId":', habitsync_json_uuid(r.habit_id),
            ',"time":', habitsync_json_text(to_char(r.time_of_day, 'HH24:MI')),
            ',"isActive":', habitsync_json_bool(r.is_active),
            ',"notificationIdentifier":', habitsync_json_text(r.notification_identifier), '}')
    $$;
COMMENT ON FUNCTION habitsync_reminder_record_json(reminders) IS 'A reminders row as its wire record, as JSON text (the same value as habitsync_reminder_record).';

-- The timestamps come in as an argument: a function whose body holds a subquery is never
-- inlined, and the call then cost more than the jsonb it replaces. Callers pass
-- (SELECT string_agg(habitsync_json_time(t), ',' ORDER BY o) FROM unnest(p.timestamps) WITH ORDINALITY AS u(t, o)).
CREATE FUNCTION habitsync_daily_progress_record_json(p daily_progress, timestamps_json text) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
        SELECT concat(
            '{"habitId":', habitsync_json_uuid(p.habit_id),
            ',"date":', habitsync_json_date(p.date),
            ',"progressCount":', habitsync_json_integer(p.progress_count),
            ',"goalCount":', habitsync_json_integer(p.goal_count),
            ',"timestamps":[', timestamps_json, ']',
            ',"difficulty":', habitsync_json_integer(p.difficulty),
            ',"skipReason":', habitsync_json_text(p.skip_reason),
            ',"skipNote":', habitsync_json_text(p.skip_note), '}')
    $$;
COMMENT ON FUNCTION habitsync_daily_progress_record_json(daily_progress, text) IS 'A daily_progress row as its wire record, as JSON text (the same value as habitsync_daily_progress_record), given its timestamps already rendered as comma-separated JSON strings.';

CREATE FUNCTION habitsync_xp_transaction_record_json(x xp_transactions) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
        SELECT concat(
            '{"amount":', habitsync_json_integer(x.amount),
            ',"reason":', habitsync_json_text(x.reason),
            ',"timestamp":', habitsync_json_time(x.occurred_at),
            ',"date":', habitsync_json_date(x.date), '}')
    $$;
COMMENT ON FUNCTION habitsync_xp_transaction_record_json(xp_transactions) IS 'An xp_transactions row as its wire record, as JSON text (the same value as habitsync_xp_transaction_record).';

CREATE FUNCTION habitsync_achievement_record_json(a achievements) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
        SELECT concat(
            '{"achievementId":', habitsync_json_text(a.achievement_id),
            ',"title":', habitsync_json_text(a.title),
            ',"description":', habitsync_json_text(a.description),
            ',"unlockedAt":', habitsync_json_time(a.unlocked_at),
            ',"xpAwarded":', habitsync_json_integer(a.xp_awarded), '}')
    $$;
COMMENT ON FUNCTION habitsync_achievement_record_json(achievements) IS 'An achievements row as its wire record, as JSON text (the same value as habitsync_achievement_record).';

CREATE FUNCTION habitsync_focus_session_record_json(f focus_sessions) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
        SELECT concat(
            '{"startTime":', habitsync_json_time(f.start_time),
            ',"endTime":', habitsync_json_time(f.end_time),
            ',"state":', habitsync_json_text(f.state),
            ',"duration":', habitsync_json_number(f.duration),
            ',"pausedDuration":', habitsync_json_number(f.paused_duration),
            ',"createdAt":', habitsync_json_time(f.created_at), '}')
    $$;
COMMENT ON FUNCTION habitsync_focus_session_record_json(focus_sessions) IS 'A focus_sessions row as its wire record, as JSON text (the same value as habitsync_focus_session_record).';

CREATE FUNCTION habitsync_usage_event_record_json(e usage_events) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
        SELECT concat(
            '{"eventType":', habitsync_json_text(e.event_type),
            ',"timestamp":', habitsync_json_time(e.occurred_at),
            ',"targetAppName":', habitsync_json_text(e.target_app_name),
            ',"pauseDuration":', habitsync_json_number(e.pause_duration),
            ',"timerDuration":', habitsync_json_number(e.timer_duration), '}')
    $$;
COMMENT ON FUNCTION habitsync_usage_event_record_json(usage_events) IS 'A usage_events row as its wire record, as JSON text (the same value as habitsync_usage_event_record).';

CREATE FUNCTION habitsync_selected_app_record_json(s selected_apps) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
        SELECT concat(
            '{"appName":', habitsync_json_text(s.app_name),
            ',"iconName":', habitsync_json_text(s.icon_name),
            ',"urlScheme":', habitsync_json_text(s.url_scheme),
            ',"isInstalled":', habitsync_json_bool(s.is_installed),
            ',"dateAdded":', habitsync_json_time(s.date_added),
            ',"orderIndex":', habitsync_json_integer(s.order_index), '}')
    $$;
COMMENT ON FUNCTION habitsync_selected_app_record_json(selected_apps) IS 'A selected_apps row as its wire record, as JSON text (the same value as habitsync_selected_app_record).';

CREATE FUNCTION habitsync_user_settings_record_json(s user_settings) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
        SELECT concat(
            '{"timezone":', habitsync_json_text(s.timezone),
            ',"gatewayTimerDuration":', habitsync_json_integer(s.gateway_timer_duration),
            ',"onboardingDeterminationLevel":', habitsync_json_integer(s.onboarding_determination_level),
            ',"selectedInterestTags":', coalesce(to_json(s.selected_interest_tags)::text, 'null'),
            ',"frePhase":', habitsync_json_text(s.fre_phase),
            ',"hasCompletedOnboarding":', habitsync_json_bool(s.has_completed_onboarding), '}')
    $$;
COMMENT ON FUNCTION habitsync_user_settings_record_json(user_settings) IS 'A user_settings row as its wire record, as JSON text (the same value as habitsync_user_settings_record).';

CREATE FUNCTION habitsync_global_streak_record_json(g global_streaks) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
        SELECT concat(
            '{"currentStreak":', habitsync_json_integer(g.current_streak),
            ',"longestStreak":', habitsync_json_integer(g.longest_streak),
            ',"totalCompleteDays":', habitsync_json_integer(g.total_complete_days),
            ',"lastCompleteDate":', habitsync_json_date(g.last_complete_date),
            ',"computedFor":', habitsync_json_date(g.computed_for), '}')
    $$;
COMMENT ON FUNCTION habitsync_global_streak_record_json(global_streaks) IS 'A global_streaks row as its wire record, as JSON text (the same value as habitsync_global_streak_record).';

CREATE FUNCTION habitsync_user_progress_record_json(p user_progress) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
        SELECT concat(
            '{"totalXP":', habitsync_json_integer(p.total_xp),
            ',"currentLevel":', habitsync_json_integer(p.current_level),
            ',"xpForCurrentLevel":', habitsync_json_integer(p.xp_for_current_level),
            ',"xpForNextLevel":', habitsync_json_integer(p.xp_for_next_level), '}')
    $$;
COMMENT ON FUNCTION habitsync_user_progress_record_json(user_progress) IS 'A user_progress row as its wire record, as JSON text (the same value as habitsync_user_progress_record).';

CREATE FUNCTION habitsync_usage_streak_record_json(s usage_streaks) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
        SELECT concat(
            '{"startDate":', habitsync_json_date(s.start_date),
            ',"currentDayCount":', habitsync_json_integer(s.current_day_count),
            ',"lastActivityDate":', habitsync_json_date(s.last_activity_date),
            ',"computedFor":', habitsync_json_date(s.computed_for), '}')
    $$;
COMMENT ON FUNCTION habitsync_usage_streak_record_json(usage_streaks) IS 'A usage_streaks row as its wire record, as JSON text (the same value as habitsync_usage_streak_record).';
