-- The sync protocol's wire format, produced by PostgreSQL itself: pulls and the `current`
-- record of a superseded change are built here, so rows are never decoded and re-encoded in
-- Swift. Field names are the camelCase wire names of spec/domain.md.

ALTER TABLE users ADD COLUMN purged_through_version bigint NOT NULL DEFAULT 0 CHECK (purged_through_version >= 0);
COMMENT ON COLUMN users.purged_through_version IS 'Highest server_version whose tombstone maintenance has purged; a pull cursor below it gets 410 cursor_expired.';

CREATE FUNCTION habitsync_wire_time(ts timestamptz) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $$;
COMMENT ON FUNCTION habitsync_wire_time(timestamptz) IS 'A timestamp as the wire writes it: RFC 3339, UTC, milliseconds (2026-11-20T08:15:30.123Z).';

CREATE FUNCTION habitsync_wire_date(d date) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT to_char(d, 'YYYY-MM-DD') $$;
COMMENT ON FUNCTION habitsync_wire_date(date) IS 'A calendar date as the wire writes it: yyyy-MM-dd.';

CREATE FUNCTION habitsync_habit_record(h habits) RETURNS jsonb
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
        SELECT jsonb_build_object(
            'name', h.name, 'habitDescription', h.habit_description, 'icon', h.icon, 'color', h.color,
            'habitType', h.habit_type, 'goalCount', h.goal_count, 'goalUnit', h.goal_unit,
            'schedule', jsonb_strip_nulls(jsonb_build_object('type', h.schedule_type, 'n', h.schedule_n, 'weekdays', to_jsonb(h.schedule_weekdays))),
            'baselineCount', h.baseline_count, 'baselineUnit', h.baseline_unit,
            'startDate', habitsync_wire_date(h.start_date), 'endDate', habitsync_wire_date(h.end_date),
            'createdAt', habitsync_wire_time(h.created_at))
    $$;
COMMENT ON FUNCTION habitsync_habit_record(habits) IS 'A habits row as its wire record.';

CREATE FUNCTION habitsync_reminder_record(r reminders) RETURNS jsonb
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
        SELECT jsonb_build_object(
            'habitId', r.habit_id, 'time', to_char(r.time_of_day, 'HH24:MI'), 'isActive', r.is_active,
            'notificationIdentifier', r.notification_identifier)
    $$;
COMMENT ON FUNCTION habitsync_reminder_record(reminders) IS 'A reminders row as its wire record.';

CREATE FUNCTION habitsync_daily_progress_record(p daily_progress) RETURNS jsonb
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
        SELECT jsonb_build_object(
            'habitId', p.habit_id, 'date', habitsync_wire_date(p.date), 'progressCount', p.progress_count,
            'goalCount', p.goal_count,
            'timestamps', coalesce((SELECT jsonb_agg(habitsync_wire_time(t) ORDER BY o) FROM unnest(p.timestamps) WITH ORDINALITY AS u(t, o)), '[]'::jsonb),
            'difficulty', p.difficulty, 'skipReason', p.skip_reason, 'skipNote', p.skip_note)
    $$;
COMMENT ON FUNCTION habitsync_daily_progress_record(daily_progress) IS 'A daily_progress row as its wire record.';

CREATE FUNCTION habitsync_xp_transaction_record(x xp_transactions) RETURNS jsonb
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
        SELECT jsonb_build_object(
            'amount', x.amount, 'reason', x.reason, 'timestamp', habitsync_wire_time(x.occurred_at), 'date', habitsync_wire_date(x.date))
    $$;
COMMENT ON FUNCTION habitsync_xp_transaction_record(xp_transactions) IS 'An xp_transactions row as its wire record.';

CREATE FUNCTION habitsync_achievement_record(a achievements) RETURNS jsonb
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
        SELECT jsonb_build_object(
            'achievementId', a.achievement_id, 'title', a.title, 'description', a.description,
            'unlockedAt', habitsync_wire_time(a.unlocked_at), 'xpAwarded', a.xp_awarded)
    $$;
COMMENT ON FUNCTION habitsync_achievement_record(achievements) IS 'An achievements row as its wire record.';

CREATE FUNCTION habitsync_focus_session_record(f focus_sessions) RETURNS jsonb
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
        SELECT jsonb_build_object(
            'startTime', habitsync_wire_time(f.start_time), 'endTime', habitsync_wire_time(f.end_time), 'state', f.state,
            'duration', f.duration, 'pausedDuration', f.paused_duration, 'createdAt', habitsync_wire_time(f.created_at))
    $$;
COMMENT ON FUNCTION habitsync_focus_session_record(focus_sessions) IS 'A focus_sessions row as its wire record.';

CREATE FUNCTION habitsync_usage_event_record(e usage_events) RETURNS jsonb
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
        SELECT jsonb_build_object(
            'eventType', e.event_type, 'timestamp', habitsync_wire_time(e.occurred_at), 'targetAppName', e.target_app_name,
            'pauseDuration', e.pause_duration, 'timerDuration', e.timer_duration)
    $$;
COMMENT ON FUNCTION habitsync_usage_event_record(usage_events) IS 'A usage_events row as its wire record.';

CREATE FUNCTION habitsync_selected_app_record(s selected_apps) RETURNS jsonb
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
        SELECT jsonb_build_object(
            'appName', s.app_name, 'iconName', s.icon_name, 'urlScheme', s.url_scheme, 'isInstalled', s.is_installed,
            'dateAdded', habitsync_wire_time(s.date_added), 'orderIndex', s.order_index)
    $$;
COMMENT ON FUNCTION habitsync_selected_app_record(selected_apps) IS 'A selected_apps row as its wire record.';

CREATE FUNCTION habitsync_user_settings_record(s user_settings) RETURNS jsonb
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
        SELECT jsonb_build_object(
            'timezone', s.timezone, 'gatewayTimerDuration', s.gateway_timer_duration,
            'onboardingDeterminationLevel', s.onboarding_determination_level,
            'selectedInterestTags', to_jsonb(s.selected_interest_tags), 'frePhase', s.fre_phase,
            'hasCompletedOnboarding', s.has_completed_onboarding)
    $$;
COMMENT ON FUNCTION habitsync_user_settings_record(user_settings) IS 'A user_settings row as its wire record.';

CREATE FUNCTION habitsync_global_streak_record(g global_streaks) RETURNS jsonb
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
        SELECT jsonb_build_object(
            'currentStreak', g.current_streak, 'longestStreak', g.longest_streak, 'totalCompleteDays', g.total_complete_days,
            'lastCompleteDate', habitsync_wire_date(g.last_complete_date), 'computedFor', habitsync_wire_date(g.computed_for))
    $$;
COMMENT ON FUNCTION habitsync_global_streak_record(global_streaks) IS 'A global_streaks row as its wire record.';

CREATE FUNCTION habitsync_user_progress_record(p user_progress) RETURNS jsonb
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
        SELECT jsonb_build_object(
            'totalXP', p.total_xp, 'currentLevel', p.current_level, 'xpForCurrentLevel', p.xp_for_current_level,
            'xpForNextLevel', p.xp_for_next_level)
    $$;
COMMENT ON FUNCTION habitsync_user_progress_record(user_progress) IS 'A user_progress row as its wire record.';

CREATE FUNCTION habitsync_usage_streak_record(s usage_streaks) RETURNS jsonb
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
        SELECT jsonb_build_object(
            'startDate', habitsync_wire_date(s.start_date), 'currentDayCount', s.current_day_count,
            'lastActivityDate', habitsync_wire_date(s.last_activity_date), 'computedFor', habitsync_wire_date(s.computed_for))
    $$;
COMMENT ON FUNCTION habitsync_usage_streak_record(usage_streaks) IS 'A usage_streaks row as its wire record.';
