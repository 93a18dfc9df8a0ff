-- habitsync-server: the initial schema.
--
-- Conventions (see docs/schema.md):
-- * Every row of per-user data carries tenant_id and user_id, and every primary key and
--   unique constraint starts with (tenant_id, user_id), so tables can later be distributed
--   by user. No foreign key crosses users.
-- * Synced tables carry the sync status fields: updated_at + updated_by (the LWW key),
--   server_version (per-user, strictly increasing), synced_at, deleted_at (tombstone).
--   A tombstone for a record the server never saw holds only those fields, so a record's
--   data columns are required only while it is live (the *_live_fields checks).
-- * CHECK constraints mirror the validation rules of spec/domain.md; the server validates
--   first and answers with field-level errors, the database is the backstop.
-- * Row-level security is enabled and forced on every per-tenant table, keyed on the
--   transaction-local settings habitsync.tenant_id and habitsync.user_id.

-- ---------------------------------------------------------------------------------------
-- Roles. Roles are cluster-wide, so creating them tolerates a concurrent creation by a
-- migration running in another database of the same cluster.
-- ---------------------------------------------------------------------------------------
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'habitsync_app') THEN
        CREATE ROLE habitsync_app NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS;
    END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
    NULL;
END
$$;

-- The role that runs migrations (the tables' owner) must be able to SET ROLE habitsync_app
-- for request connections.
DO $$
BEGIN
    IF NOT pg_has_role(current_user, 'habitsync_app', 'MEMBER') THEN
        EXECUTE format('GRANT habitsync_app TO %I', current_user);
    END IF;
END
$$;

-- ---------------------------------------------------------------------------------------
-- Request context and shared validation functions.
-- ---------------------------------------------------------------------------------------
CREATE FUNCTION habitsync_current_tenant_id() RETURNS uuid
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT NULLIF(current_setting('habitsync.tenant_id', true), '')::uuid $$;
COMMENT ON FUNCTION habitsync_current_tenant_id() IS 'The tenant of the current transaction (set_config(''habitsync.tenant_id'', …, true)); NULL when unset, which makes every per-tenant table look empty.';

CREATE FUNCTION habitsync_current_user_id() RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT NULLIF(current_setting('habitsync.user_id', true), '') $$;
COMMENT ON FUNCTION habitsync_current_user_id() IS 'The user of the current transaction (habitsync.user_id); NULL for tenant-wide work such as maintenance.';

CREATE FUNCTION habitsync_row_visible(row_tenant_id uuid, row_user_id text) RETURNS boolean
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
        SELECT row_tenant_id = habitsync_current_tenant_id()
           AND (habitsync_current_user_id() IS NULL OR row_user_id = habitsync_current_user_id())
    $$;
COMMENT ON FUNCTION habitsync_row_visible(uuid, text) IS 'Row-level security predicate for per-user tables: the row belongs to the current tenant and, when a user is set, to that user.';

CREATE FUNCTION habitsync_valid_weekdays(days text[]) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
        SELECT cardinality(days) BETWEEN 1 AND 7
           AND days <@ ARRAY['sunday','monday','tuesday','wednesday','thursday','friday','saturday']
           AND array_position(days, NULL) IS NULL
           AND (SELECT count(DISTINCT d) FROM unnest(days) AS d) = cardinality(days)
    $$;
COMMENT ON FUNCTION habitsync_valid_weekdays(text[]) IS 'A specificWeekdays schedule: 1 to 7 distinct names from sunday to saturday.';

CREATE FUNCTION habitsync_no_null_elements(items anyarray) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT array_position(items, NULL) IS NULL $$;
COMMENT ON FUNCTION habitsync_no_null_elements(anyarray) IS 'True when an array has no NULL element.';

-- ---------------------------------------------------------------------------------------
-- Tenants and their JWT keys.
-- ---------------------------------------------------------------------------------------
CREATE TABLE tenants (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name                text NOT NULL UNIQUE CHECK (char_length(btrim(name)) BETWEEN 1 AND 200),
    daily_completion_xp integer NOT NULL DEFAULT 50 CHECK (daily_completion_xp BETWEEN 0 AND 100000),
    created_at          timestamptz NOT NULL DEFAULT now(),
    disabled_at         timestamptz
);
COMMENT ON TABLE tenants IS 'Apps or organisations that run their own users. Devices name their tenant in the JWT tid claim.';
COMMENT ON COLUMN tenants.id IS 'Tenant id, the JWT tid claim.';
COMMENT ON COLUMN tenants.name IS 'Unique human-readable name, given at tenant create.';
COMMENT ON COLUMN tenants.daily_completion_xp IS 'XP awarded for each complete day (0 turns daily awards off; default 50).';
COMMENT ON COLUMN tenants.created_at IS 'When the tenant was created.';
COMMENT ON COLUMN tenants.disabled_at IS 'When set, the tenant''s tokens are refused.';

CREATE TABLE tenant_keys (
    tenant_id      uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    id             uuid NOT NULL DEFAULT gen_random_uuid(),
    algorithm      text NOT NULL CHECK (algorithm IN ('HS256', 'ES256', 'RS256')),
    hs256_secret   bytea,
    public_key_pem text,
    created_at     timestamptz NOT NULL DEFAULT now(),
    retired_at     timestamptz,
    PRIMARY KEY (tenant_id, id),
    CONSTRAINT tenant_keys_material CHECK (
        (algorithm = 'HS256' AND hs256_secret IS NOT NULL AND octet_length(hs256_secret) >= 32 AND public_key_pem IS NULL)
        OR (algorithm IN ('ES256', 'RS256') AND hs256_secret IS NULL AND public_key_pem LIKE '-----BEGIN %')
    )
);
COMMENT ON TABLE tenant_keys IS 'JWT verification keys per tenant. Secret: never readable by analysts.';
COMMENT ON COLUMN tenant_keys.tenant_id IS 'Owning tenant.';
COMMENT ON COLUMN tenant_keys.id IS 'Key id (JWT kid header, optional).';
COMMENT ON COLUMN tenant_keys.algorithm IS 'HS256 (shared secret), ES256 or RS256 (public key). A token must use exactly this algorithm.';
COMMENT ON COLUMN tenant_keys.hs256_secret IS 'HS256 shared secret, at least 32 bytes. Secret.';
COMMENT ON COLUMN tenant_keys.public_key_pem IS 'ES256/RS256 public key, PEM.';
COMMENT ON COLUMN tenant_keys.created_at IS 'When the key was added.';
COMMENT ON COLUMN tenant_keys.retired_at IS 'When rotate-key replaced it; retired keys verify no token.';

-- ---------------------------------------------------------------------------------------
-- Users and devices.
-- ---------------------------------------------------------------------------------------
CREATE TABLE users (
    tenant_id         uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    user_id           text NOT NULL CHECK (char_length(user_id) BETWEEN 1 AND 255),
    change_counter    bigint NOT NULL DEFAULT 0 CHECK (change_counter >= 0),
    time_zone         text NOT NULL DEFAULT 'UTC' CHECK (time_zone ~ '^[A-Za-z0-9_+/-]{1,64}$'),
    derived_record_id uuid NOT NULL DEFAULT gen_random_uuid(),
    created_at        timestamptz NOT NULL DEFAULT now(),
    last_seen_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, user_id)
);
COMMENT ON TABLE users IS 'Users of a tenant, created on their first request. The unit of sync.';
COMMENT ON COLUMN users.tenant_id IS 'Owning tenant.';
COMMENT ON COLUMN users.user_id IS 'The JWT sub claim, unique within the tenant.';
COMMENT ON COLUMN users.change_counter IS 'Last server_version allocated to this user. Incremented under the row lock inside each writing transaction, so versions commit in order and a pull never misses a change.';
COMMENT ON COLUMN users.time_zone IS 'IANA time zone of the user''s calendar days (copied from userSettings.timezone).';
COMMENT ON COLUMN users.derived_record_id IS 'The id of the user''s derived records (globalStreak, userProgress, usageStreak) and settings, fixed for the user''s lifetime.';
COMMENT ON COLUMN users.created_at IS 'First request.';
COMMENT ON COLUMN users.last_seen_at IS 'Latest request.';

CREATE TABLE devices (
    tenant_id     uuid NOT NULL,
    user_id       text NOT NULL,
    device_id     text NOT NULL CHECK (char_length(device_id) BETWEEN 1 AND 100),
    first_seen_at timestamptz NOT NULL DEFAULT now(),
    last_seen_at  timestamptz NOT NULL DEFAULT now(),
    last_push_at  timestamptz,
    last_pull_at  timestamptz,
    PRIMARY KEY (tenant_id, user_id, device_id),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, user_id) ON DELETE CASCADE
);
COMMENT ON TABLE devices IS 'Devices of a user, from the X-Device-Id header.';
COMMENT ON COLUMN devices.tenant_id IS 'Owning tenant.';
COMMENT ON COLUMN devices.user_id IS 'Owning user.';
COMMENT ON COLUMN devices.device_id IS 'X-Device-Id (1–100 chars); also the LWW tie-breaker.';
COMMENT ON COLUMN devices.first_seen_at IS 'First request from this device.';
COMMENT ON COLUMN devices.last_seen_at IS 'Latest request from this device.';
COMMENT ON COLUMN devices.last_push_at IS 'Latest push.';
COMMENT ON COLUMN devices.last_pull_at IS 'Latest pull.';

-- ---------------------------------------------------------------------------------------
-- Synced collections.
-- ---------------------------------------------------------------------------------------
CREATE TABLE habits (
    tenant_id         uuid NOT NULL,
    user_id           text NOT NULL,
    id                uuid NOT NULL,
    name              text CHECK (char_length(btrim(name)) BETWEEN 1 AND 200),
    habit_description text CHECK (char_length(habit_description) <= 2000),
    icon              text CHECK (char_length(icon) <= 100),
    color             text CHECK (color ~ '^#[0-9A-Fa-f]{6}([0-9A-Fa-f]{2})?$'),
    habit_type        text CHECK (habit_type IN ('formation', 'breaking')),
    goal_count        integer CHECK (goal_count > 0),
    goal_unit         text CHECK (char_length(goal_unit) BETWEEN 1 AND 50),
    schedule_type     text CHECK (schedule_type IN ('daily', 'everyNDays', 'specificWeekdays', 'frequencyWeekly', 'frequencyMonthly')),
    schedule_n        integer,
    schedule_weekdays text[],
    baseline_count    integer,
    baseline_unit     text CHECK (char_length(baseline_unit) <= 50),
    start_date        date,
    end_date          date,
    created_at        timestamptz,
    updated_at        timestamptz(3) NOT NULL,
    updated_by        text NOT NULL CHECK (char_length(updated_by) BETWEEN 1 AND 100),
    server_version    bigint NOT NULL CHECK (server_version > 0),
    synced_at         timestamptz NOT NULL DEFAULT now(),
    deleted_at        timestamptz,
    PRIMARY KEY (tenant_id, user_id, id),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, user_id) ON DELETE CASCADE,
    CONSTRAINT habits_live_fields CHECK (deleted_at IS NOT NULL OR (
        name IS NOT NULL AND habit_description IS NOT NULL AND icon IS NOT NULL AND habit_type IS NOT NULL
        AND goal_count IS NOT NULL AND goal_unit IS NOT NULL AND schedule_type IS NOT NULL
        AND start_date IS NOT NULL AND created_at IS NOT NULL)),
    -- coalesce: a NULL schedule_n would make the CASE NULL, which a CHECK lets through.
    CONSTRAINT habits_schedule CHECK (schedule_type IS NULL OR coalesce(CASE schedule_type
        WHEN 'daily' THEN schedule_n IS NULL AND schedule_weekdays IS NULL
        WHEN 'everyNDays' THEN schedule_n >= 1 AND schedule_weekdays IS NULL
        WHEN 'specificWeekdays' THEN schedule_n IS NULL AND schedule_weekdays IS NOT NULL AND habitsync_valid_weekdays(schedule_weekdays)
        WHEN 'frequencyWeekly' THEN schedule_n BETWEEN 1 AND 7 AND schedule_weekdays IS NULL
        WHEN 'frequencyMonthly' THEN schedule_n BETWEEN 1 AND 31 AND schedule_weekdays IS NULL
        END, false)),
    CONSTRAINT habits_breaking_baseline CHECK (habit_type IS DISTINCT FROM 'breaking'
        OR (baseline_count IS NOT NULL AND baseline_count > goal_count)),
    CONSTRAINT habits_date_range CHECK (end_date IS NULL OR end_date >= start_date)
);
CREATE UNIQUE INDEX habits_pull ON habits (tenant_id, user_id, server_version);
COMMENT ON TABLE habits IS 'habits collection (HabitModel): what a user builds or breaks. Last-writer-wins; deleted_at marks a tombstone.';
COMMENT ON COLUMN habits.tenant_id IS 'Owning tenant.';
COMMENT ON COLUMN habits.user_id IS 'Owning user.';
COMMENT ON COLUMN habits.id IS 'Record id (UUID chosen by the device).';
COMMENT ON COLUMN habits.name IS 'Name, 1–200 characters after trimming.';
COMMENT ON COLUMN habits.habit_description IS 'Wire habitDescription; up to 2000 characters, default empty.';
COMMENT ON COLUMN habits.icon IS 'Icon name, up to 100 characters, default empty.';
COMMENT ON COLUMN habits.color IS 'Colour as #RRGGBB or #RRGGBBAA; NULL for the app default.';
COMMENT ON COLUMN habits.habit_type IS 'formation (goal is a minimum) or breaking (goal is a ceiling).';
COMMENT ON COLUMN habits.goal_count IS 'Daily goal amount, > 0.';
COMMENT ON COLUMN habits.goal_unit IS 'Unit of the goal (times, minutes…), 1–50 characters.';
COMMENT ON COLUMN habits.schedule_type IS 'daily, everyNDays, specificWeekdays, frequencyWeekly or frequencyMonthly.';
COMMENT ON COLUMN habits.schedule_n IS 'N of everyNDays (≥ 1), frequencyWeekly (1–7) or frequencyMonthly (1–31); NULL otherwise.';
COMMENT ON COLUMN habits.schedule_weekdays IS 'Weekday names (sunday…saturday) of a specificWeekdays schedule; NULL otherwise.';
COMMENT ON COLUMN habits.baseline_count IS 'Starting amount of a breaking habit; required for breaking habits and greater than goal_count.';
COMMENT ON COLUMN habits.baseline_unit IS 'Unit of baseline_count.';
COMMENT ON COLUMN habits.start_date IS 'First calendar day (user''s time zone) the habit applies.';
COMMENT ON COLUMN habits.end_date IS 'Last calendar day, or NULL for open-ended; ≥ start_date.';
COMMENT ON COLUMN habits.created_at IS 'When the habit was created (device time, or the server time of the first write).';
COMMENT ON COLUMN habits.updated_at IS 'LWW key, part 1: the winning write''s updatedAt (millisecond precision).';
COMMENT ON COLUMN habits.updated_by IS 'LWW key, part 2: the winning write''s device id, or ''server''.';
COMMENT ON COLUMN habits.server_version IS 'Per-user change number of the latest write; pull returns changes in this order.';
COMMENT ON COLUMN habits.synced_at IS 'Server time the winning write was accepted.';
COMMENT ON COLUMN habits.deleted_at IS 'Tombstone: when set the habit is deleted (its reminders and progress are tombstoned too).';

CREATE TABLE reminders (
    tenant_id               uuid NOT NULL,
    user_id                 text NOT NULL,
    id                      uuid NOT NULL,
    habit_id                uuid,
    time_of_day             time(0) CHECK (EXTRACT(SECOND FROM time_of_day) = 0),
    is_active               boolean,
    notification_identifier text CHECK (char_length(notification_identifier) <= 200),
    updated_at              timestamptz(3) NOT NULL,
    updated_by              text NOT NULL CHECK (char_length(updated_by) BETWEEN 1 AND 100),
    server_version          bigint NOT NULL CHECK (server_version > 0),
    synced_at               timestamptz NOT NULL DEFAULT now(),
    deleted_at              timestamptz,
    PRIMARY KEY (tenant_id, user_id, id),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, user_id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, user_id, habit_id) REFERENCES habits (tenant_id, user_id, id),
    CONSTRAINT reminders_live_fields CHECK (deleted_at IS NOT NULL OR (habit_id IS NOT NULL AND time_of_day IS NOT NULL AND is_active IS NOT NULL))
);
CREATE UNIQUE INDEX reminders_pull ON reminders (tenant_id, user_id, server_version);
CREATE INDEX reminders_by_habit ON reminders (tenant_id, user_id, habit_id);
COMMENT ON TABLE reminders IS 'reminders collection (ReminderModel): local notification times of a habit. Last-writer-wins.';
COMMENT ON COLUMN reminders.tenant_id IS 'Owning tenant.';
COMMENT ON COLUMN reminders.user_id IS 'Owning user.';
COMMENT ON COLUMN reminders.id IS 'Record id.';
COMMENT ON COLUMN reminders.habit_id IS 'The habit reminded of (same user).';
COMMENT ON COLUMN reminders.time_of_day IS 'Wire time (HH:mm): local time of day of the reminder.';
COMMENT ON COLUMN reminders.is_active IS 'Whether the reminder fires; default true.';
COMMENT ON COLUMN reminders.notification_identifier IS 'The device''s notification identifier, if any.';
COMMENT ON COLUMN reminders.updated_at IS 'LWW key, part 1.';
COMMENT ON COLUMN reminders.updated_by IS 'LWW key, part 2: device id or ''server'' (cascaded deletes).';
COMMENT ON COLUMN reminders.server_version IS 'Per-user change number of the latest write.';
COMMENT ON COLUMN reminders.synced_at IS 'Server time the winning write was accepted.';
COMMENT ON COLUMN reminders.deleted_at IS 'Tombstone.';

CREATE TABLE daily_progress (
    tenant_id      uuid NOT NULL,
    user_id        text NOT NULL,
    id             uuid NOT NULL,
    habit_id       uuid,
    date           date,
    progress_count integer CHECK (progress_count >= 0),
    goal_count     integer CHECK (goal_count > 0),
    timestamps     timestamptz(3)[] CHECK (cardinality(timestamps) <= 1000 AND habitsync_no_null_elements(timestamps)),
    difficulty     smallint CHECK (difficulty BETWEEN 1 AND 5),
    skip_reason    text CHECK (skip_reason IN ('medical', 'travel', 'equipment', 'weather', 'emergency', 'rest', 'other')),
    skip_note      text CHECK (char_length(skip_note) <= 500),
    updated_at     timestamptz(3) NOT NULL,
    updated_by     text NOT NULL CHECK (char_length(updated_by) BETWEEN 1 AND 100),
    server_version bigint NOT NULL CHECK (server_version > 0),
    synced_at      timestamptz NOT NULL DEFAULT now(),
    deleted_at     timestamptz,
    PRIMARY KEY (tenant_id, user_id, id),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, user_id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, user_id, habit_id) REFERENCES habits (tenant_id, user_id, id),
    CONSTRAINT daily_progress_live_fields CHECK (deleted_at IS NOT NULL OR (
        habit_id IS NOT NULL AND date IS NOT NULL AND progress_count IS NOT NULL AND goal_count IS NOT NULL AND timestamps IS NOT NULL))
);
CREATE UNIQUE INDEX daily_progress_pull ON daily_progress (tenant_id, user_id, server_version);
-- The natural key: two devices' records for the same habit and day are one record.
CREATE UNIQUE INDEX daily_progress_natural_key ON daily_progress (tenant_id, user_id, habit_id, date);
COMMENT ON TABLE daily_progress IS 'dailyProgress collection (DailyProgressModel): one record per habit and calendar day, identified by (habit_id, date). Last-writer-wins.';
COMMENT ON COLUMN daily_progress.tenant_id IS 'Owning tenant.';
COMMENT ON COLUMN daily_progress.user_id IS 'Owning user.';
COMMENT ON COLUMN daily_progress.id IS 'Canonical record id: the first id the server saw for this (habit_id, date).';
COMMENT ON COLUMN daily_progress.habit_id IS 'The habit (same user).';
COMMENT ON COLUMN daily_progress.date IS 'Calendar day in the user''s time zone.';
COMMENT ON COLUMN daily_progress.progress_count IS 'Completions (formation) or usage (breaking) that day, ≥ 0.';
COMMENT ON COLUMN daily_progress.goal_count IS 'Snapshot of the habit''s goal that day, > 0, so goal changes do not rewrite history.';
COMMENT ON COLUMN daily_progress.timestamps IS 'When each completion was logged (at most 1000).';
COMMENT ON COLUMN daily_progress.difficulty IS 'Perceived difficulty 1–5, optional.';
COMMENT ON COLUMN daily_progress.skip_reason IS 'Why the day was skipped (medical, travel, equipment, weather, emergency, rest, other); a skipped day is neutral for streaks.';
COMMENT ON COLUMN daily_progress.skip_note IS 'Free-text note on the skip, up to 500 characters.';
COMMENT ON COLUMN daily_progress.updated_at IS 'LWW key, part 1.';
COMMENT ON COLUMN daily_progress.updated_by IS 'LWW key, part 2: device id or ''server''.';
COMMENT ON COLUMN daily_progress.server_version IS 'Per-user change number of the latest write.';
COMMENT ON COLUMN daily_progress.synced_at IS 'Server time the winning write was accepted.';
COMMENT ON COLUMN daily_progress.deleted_at IS 'Tombstone.';

CREATE TABLE xp_transactions (
    tenant_id      uuid NOT NULL,
    user_id        text NOT NULL,
    id             uuid NOT NULL,
    amount         integer CHECK (amount <> 0 AND abs(amount) <= 100000),
    reason         text CHECK (char_length(reason) BETWEEN 1 AND 200),
    occurred_at    timestamptz(3),
    date           date,
    updated_at     timestamptz(3) NOT NULL,
    updated_by     text NOT NULL CHECK (char_length(updated_by) BETWEEN 1 AND 100),
    server_version bigint NOT NULL CHECK (server_version > 0),
    synced_at      timestamptz NOT NULL DEFAULT now(),
    deleted_at     timestamptz,
    PRIMARY KEY (tenant_id, user_id, id),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, user_id) ON DELETE CASCADE,
    CONSTRAINT xp_transactions_live_fields CHECK (deleted_at IS NOT NULL OR (amount IS NOT NULL AND reason IS NOT NULL AND occurred_at IS NOT NULL))
);
CREATE UNIQUE INDEX xp_transactions_pull ON xp_transactions (tenant_id, user_id, server_version);
CREATE INDEX xp_transactions_by_date ON xp_transactions (tenant_id, user_id, date) WHERE date IS NOT NULL;
COMMENT ON TABLE xp_transactions IS 'xpTransactions collection (XPTransactionModel): the append-only XP ledger, the only source of totalXP. A reversal is a new negative row.';
COMMENT ON COLUMN xp_transactions.tenant_id IS 'Owning tenant.';
COMMENT ON COLUMN xp_transactions.user_id IS 'Owning user.';
COMMENT ON COLUMN xp_transactions.id IS 'Record id.';
COMMENT ON COLUMN xp_transactions.amount IS 'XP added (positive) or removed (negative); non-zero, |amount| ≤ 100000.';
COMMENT ON COLUMN xp_transactions.reason IS 'Why (1–200 characters); the server''s daily awards use daily_completion / daily_completion_reversed.';
COMMENT ON COLUMN xp_transactions.occurred_at IS 'Wire timestamp: when the transaction happened.';
COMMENT ON COLUMN xp_transactions.date IS 'The calendar day an award is for (always set on daily completion awards).';
COMMENT ON COLUMN xp_transactions.updated_at IS 'LWW key, part 1 (the first write''s; the ledger is append-only).';
COMMENT ON COLUMN xp_transactions.updated_by IS 'Device id, or ''server'' for daily completion awards.';
COMMENT ON COLUMN xp_transactions.server_version IS 'Per-user change number of the write.';
COMMENT ON COLUMN xp_transactions.synced_at IS 'Server time the write was accepted.';
COMMENT ON COLUMN xp_transactions.deleted_at IS 'Always NULL: ledger rows are never deleted (kept for the uniform sync fields).';

CREATE TABLE achievements (
    tenant_id      uuid NOT NULL,
    user_id        text NOT NULL,
    id             uuid NOT NULL,
    achievement_id text CHECK (char_length(achievement_id) BETWEEN 1 AND 100),
    title          text CHECK (char_length(title) BETWEEN 1 AND 200),
    description    text CHECK (char_length(description) <= 2000),
    unlocked_at    timestamptz(3),
    xp_awarded     integer CHECK (xp_awarded >= 0),
    updated_at     timestamptz(3) NOT NULL,
    updated_by     text NOT NULL CHECK (char_length(updated_by) BETWEEN 1 AND 100),
    server_version bigint NOT NULL CHECK (server_version > 0),
    synced_at      timestamptz NOT NULL DEFAULT now(),
    deleted_at     timestamptz,
    PRIMARY KEY (tenant_id, user_id, id),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, user_id) ON DELETE CASCADE,
    CONSTRAINT achievements_live_fields CHECK (deleted_at IS NOT NULL OR (
        achievement_id IS NOT NULL AND title IS NOT NULL AND description IS NOT NULL AND unlocked_at IS NOT NULL AND xp_awarded IS NOT NULL))
);
CREATE UNIQUE INDEX achievements_pull ON achievements (tenant_id, user_id, server_version);
CREATE UNIQUE INDEX achievements_natural_key ON achievements (tenant_id, user_id, achievement_id);
COMMENT ON TABLE achievements IS 'achievements collection (AchievementModel): one row per user and achievement_id; the earliest unlocked_at wins.';
COMMENT ON COLUMN achievements.tenant_id IS 'Owning tenant.';
COMMENT ON COLUMN achievements.user_id IS 'Owning user.';
COMMENT ON COLUMN achievements.id IS 'Record id of the first unlock the server saw.';
COMMENT ON COLUMN achievements.achievement_id IS 'Which achievement (1–100 characters), unique per user.';
COMMENT ON COLUMN achievements.title IS 'Display title.';
COMMENT ON COLUMN achievements.description IS 'Display description, default empty.';
COMMENT ON COLUMN achievements.unlocked_at IS 'When it was unlocked; the earliest wins.';
COMMENT ON COLUMN achievements.xp_awarded IS 'XP that came with it, ≥ 0.';
COMMENT ON COLUMN achievements.updated_at IS 'LWW key, part 1.';
COMMENT ON COLUMN achievements.updated_by IS 'LWW key, part 2.';
COMMENT ON COLUMN achievements.server_version IS 'Per-user change number of the latest write.';
COMMENT ON COLUMN achievements.synced_at IS 'Server time the winning write was accepted.';
COMMENT ON COLUMN achievements.deleted_at IS 'Always NULL: achievements are insert-once.';

CREATE TABLE focus_sessions (
    tenant_id       uuid NOT NULL,
    user_id         text NOT NULL,
    id              uuid NOT NULL,
    start_time      timestamptz(3),
    end_time        timestamptz(3),
    state           text CHECK (state IN ('active', 'paused', 'completed', 'abandoned')),
    duration        double precision CHECK (duration BETWEEN 0 AND 1500),
    paused_duration double precision CHECK (paused_duration >= 0 AND paused_duration < 'Infinity'),
    created_at      timestamptz(3),
    updated_at      timestamptz(3) NOT NULL,
    updated_by      text NOT NULL CHECK (char_length(updated_by) BETWEEN 1 AND 100),
    server_version  bigint NOT NULL CHECK (server_version > 0),
    synced_at       timestamptz NOT NULL DEFAULT now(),
    deleted_at      timestamptz,
    PRIMARY KEY (tenant_id, user_id, id),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, user_id) ON DELETE CASCADE,
    CONSTRAINT focus_sessions_live_fields CHECK (deleted_at IS NOT NULL OR (
        start_time IS NOT NULL AND state IS NOT NULL AND duration IS NOT NULL AND paused_duration IS NOT NULL AND created_at IS NOT NULL)),
    CONSTRAINT focus_sessions_end_time CHECK (state IS NULL
        OR (state IN ('active', 'paused') AND end_time IS NULL)
        OR (state IN ('completed', 'abandoned') AND end_time IS NOT NULL AND end_time >= start_time))
);
CREATE UNIQUE INDEX focus_sessions_pull ON focus_sessions (tenant_id, user_id, server_version);
-- At most one running (active or paused) session per user.
CREATE UNIQUE INDEX focus_sessions_one_running ON focus_sessions (tenant_id, user_id)
    WHERE state IN ('active', 'paused') AND deleted_at IS NULL;
COMMENT ON TABLE focus_sessions IS 'focusSessions collection (FocusSession): focus timer runs. LWW plus a state machine: completed and abandoned are final; one running session per user.';
COMMENT ON COLUMN focus_sessions.tenant_id IS 'Owning tenant.';
COMMENT ON COLUMN focus_sessions.user_id IS 'Owning user.';
COMMENT ON COLUMN focus_sessions.id IS 'Record id.';
COMMENT ON COLUMN focus_sessions.start_time IS 'When the session started.';
COMMENT ON COLUMN focus_sessions.end_time IS 'When it ended; NULL exactly while active or paused, else ≥ start_time.';
COMMENT ON COLUMN focus_sessions.state IS 'active, paused, completed or abandoned.';
COMMENT ON COLUMN focus_sessions.duration IS 'Focus time in seconds, excluding pauses (0–1500).';
COMMENT ON COLUMN focus_sessions.paused_duration IS 'Time spent paused, in seconds (≥ 0).';
COMMENT ON COLUMN focus_sessions.created_at IS 'When the record was created (default start_time).';
COMMENT ON COLUMN focus_sessions.updated_at IS 'LWW key, part 1.';
COMMENT ON COLUMN focus_sessions.updated_by IS 'LWW key, part 2: device id, or ''server'' for an auto-abandoned session.';
COMMENT ON COLUMN focus_sessions.server_version IS 'Per-user change number of the latest write.';
COMMENT ON COLUMN focus_sessions.synced_at IS 'Server time the winning write was accepted.';
COMMENT ON COLUMN focus_sessions.deleted_at IS 'Tombstone.';

CREATE TABLE selected_apps (
    tenant_id      uuid NOT NULL,
    user_id        text NOT NULL,
    id             uuid NOT NULL,
    app_name       text CHECK (char_length(btrim(app_name)) BETWEEN 1 AND 200),
    icon_name      text CHECK (char_length(icon_name) BETWEEN 1 AND 200),
    url_scheme     text CHECK (url_scheme ~ '^[A-Za-z][A-Za-z0-9+.-]*://[^[:space:]]*$' AND char_length(url_scheme) <= 500),
    is_installed   boolean,
    date_added     timestamptz(3),
    order_index    integer CHECK (order_index >= 0),
    updated_at     timestamptz(3) NOT NULL,
    updated_by     text NOT NULL CHECK (char_length(updated_by) BETWEEN 1 AND 100),
    server_version bigint NOT NULL CHECK (server_version > 0),
    synced_at      timestamptz NOT NULL DEFAULT now(),
    deleted_at     timestamptz,
    PRIMARY KEY (tenant_id, user_id, id),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, user_id) ON DELETE CASCADE,
    CONSTRAINT selected_apps_live_fields CHECK (deleted_at IS NOT NULL OR (
        app_name IS NOT NULL AND icon_name IS NOT NULL AND url_scheme IS NOT NULL AND is_installed IS NOT NULL
        AND date_added IS NOT NULL AND order_index IS NOT NULL))
);
CREATE UNIQUE INDEX selected_apps_pull ON selected_apps (tenant_id, user_id, server_version);
COMMENT ON TABLE selected_apps IS 'selectedApps collection (SelectedApp, seed 002): apps the mindful gateway stands in front of. Last-writer-wins.';
COMMENT ON COLUMN selected_apps.tenant_id IS 'Owning tenant.';
COMMENT ON COLUMN selected_apps.user_id IS 'Owning user.';
COMMENT ON COLUMN selected_apps.id IS 'Record id.';
COMMENT ON COLUMN selected_apps.app_name IS 'Display name of the app.';
COMMENT ON COLUMN selected_apps.icon_name IS 'Icon name, non-empty.';
COMMENT ON COLUMN selected_apps.url_scheme IS 'URL scheme that opens the app, such as instagram://.';
COMMENT ON COLUMN selected_apps.is_installed IS 'Whether the app is installed; default true.';
COMMENT ON COLUMN selected_apps.date_added IS 'When the user added it.';
COMMENT ON COLUMN selected_apps.order_index IS 'Position in the user''s list, ≥ 0.';
COMMENT ON COLUMN selected_apps.updated_at IS 'LWW key, part 1.';
COMMENT ON COLUMN selected_apps.updated_by IS 'LWW key, part 2.';
COMMENT ON COLUMN selected_apps.server_version IS 'Per-user change number of the latest write.';
COMMENT ON COLUMN selected_apps.synced_at IS 'Server time the winning write was accepted.';
COMMENT ON COLUMN selected_apps.deleted_at IS 'Tombstone.';

CREATE TABLE user_settings (
    tenant_id                      uuid NOT NULL,
    user_id                        text NOT NULL,
    id                             uuid NOT NULL,
    timezone                       text CHECK (timezone ~ '^[A-Za-z0-9_+/-]{1,64}$'),
    gateway_timer_duration         integer CHECK (gateway_timer_duration BETWEEN 15 AND 45),
    onboarding_determination_level integer CHECK (onboarding_determination_level BETWEEN 1 AND 10),
    selected_interest_tags         text[] CHECK (habitsync_no_null_elements(selected_interest_tags) AND cardinality(selected_interest_tags) <= 100),
    fre_phase                      text CHECK (fre_phase IN ('notStarted', 'phase1Complete', 'phase2Complete')),
    has_completed_onboarding       boolean,
    updated_at                     timestamptz(3) NOT NULL,
    updated_by                     text NOT NULL CHECK (char_length(updated_by) BETWEEN 1 AND 100),
    server_version                 bigint NOT NULL CHECK (server_version > 0),
    synced_at                      timestamptz NOT NULL DEFAULT now(),
    deleted_at                     timestamptz,
    PRIMARY KEY (tenant_id, user_id),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, user_id) ON DELETE CASCADE,
    CONSTRAINT user_settings_live_fields CHECK (deleted_at IS NOT NULL OR (
        timezone IS NOT NULL AND gateway_timer_duration IS NOT NULL AND onboarding_determination_level IS NOT NULL
        AND selected_interest_tags IS NOT NULL AND fre_phase IS NOT NULL AND has_completed_onboarding IS NOT NULL))
);
CREATE UNIQUE INDEX user_settings_pull ON user_settings (tenant_id, user_id, server_version);
COMMENT ON TABLE user_settings IS 'userSettings collection: one per user (the preferences of seed 002 plus the time zone). Last-writer-wins.';
COMMENT ON COLUMN user_settings.tenant_id IS 'Owning tenant.';
COMMENT ON COLUMN user_settings.user_id IS 'Owning user (the natural key).';
COMMENT ON COLUMN user_settings.id IS 'Record id on the wire: the user''s derived_record_id.';
COMMENT ON COLUMN user_settings.timezone IS 'IANA time zone of the user''s calendar days; default UTC.';
COMMENT ON COLUMN user_settings.gateway_timer_duration IS 'Gateway pause length in seconds (15–45, default 30).';
COMMENT ON COLUMN user_settings.onboarding_determination_level IS 'Self-rated determination from onboarding (1–10, default 5).';
COMMENT ON COLUMN user_settings.selected_interest_tags IS 'Interest tags chosen at onboarding.';
COMMENT ON COLUMN user_settings.fre_phase IS 'First-run experience phase: notStarted, phase1Complete or phase2Complete.';
COMMENT ON COLUMN user_settings.has_completed_onboarding IS 'Whether onboarding is done.';
COMMENT ON COLUMN user_settings.updated_at IS 'LWW key, part 1.';
COMMENT ON COLUMN user_settings.updated_by IS 'LWW key, part 2.';
COMMENT ON COLUMN user_settings.server_version IS 'Per-user change number of the latest write.';
COMMENT ON COLUMN user_settings.synced_at IS 'Server time the winning write was accepted.';
COMMENT ON COLUMN user_settings.deleted_at IS 'Tombstone (settings reset to defaults).';

-- ---------------------------------------------------------------------------------------
-- Usage events: append-only, range-partitioned by month on occurred_at.
-- The primary key must include the partition key; the server checks an id's first write
-- through usage_events_by_id before inserting (the append-only rule).
-- ---------------------------------------------------------------------------------------
CREATE TABLE usage_events (
    tenant_id       uuid NOT NULL,
    user_id         text NOT NULL,
    id              uuid NOT NULL,
    event_type      text NOT NULL CHECK (event_type IN ('exit_to_focus', 'deepen_pause', 'proceed_to_app')),
    occurred_at     timestamptz(3) NOT NULL,
    target_app_name text CHECK (char_length(target_app_name) <= 200),
    pause_duration  double precision NOT NULL CHECK (pause_duration >= 0),
    timer_duration  double precision NOT NULL CHECK (timer_duration > 0 AND timer_duration < 'Infinity'),
    updated_at      timestamptz(3) NOT NULL,
    updated_by      text NOT NULL CHECK (char_length(updated_by) BETWEEN 1 AND 100),
    server_version  bigint NOT NULL CHECK (server_version > 0),
    synced_at       timestamptz NOT NULL DEFAULT now(),
    deleted_at      timestamptz,
    PRIMARY KEY (tenant_id, user_id, id, occurred_at),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, user_id) ON DELETE CASCADE,
    CONSTRAINT usage_events_pause_within_timer CHECK (pause_duration <= timer_duration),
    CONSTRAINT usage_events_proceed_target CHECK (event_type <> 'proceed_to_app' OR coalesce(char_length(btrim(target_app_name)) >= 1, false))
) PARTITION BY RANGE (occurred_at);
CREATE INDEX usage_events_pull ON usage_events (tenant_id, user_id, server_version);
CREATE INDEX usage_events_by_id ON usage_events (tenant_id, user_id, id);
-- Recent activity of a user (usage streak, statistics) without reading their whole history.
CREATE INDEX usage_events_by_time ON usage_events (tenant_id, user_id, occurred_at);
COMMENT ON TABLE usage_events IS 'usageEvents collection (UsageEvent, seed 002): append-only gateway events, partitioned by month of occurred_at; old months are moved to the archive schema by maintenance run.';
COMMENT ON COLUMN usage_events.tenant_id IS 'Owning tenant.';
COMMENT ON COLUMN usage_events.user_id IS 'Owning user.';
COMMENT ON COLUMN usage_events.id IS 'Record id.';
COMMENT ON COLUMN usage_events.event_type IS 'exit_to_focus (a conscious exit), deepen_pause, or proceed_to_app.';
COMMENT ON COLUMN usage_events.occurred_at IS 'Wire timestamp: when the event happened; the partition key.';
COMMENT ON COLUMN usage_events.target_app_name IS 'App the user was opening; required for proceed_to_app.';
COMMENT ON COLUMN usage_events.pause_duration IS 'Seconds the user paused, 0 … timer_duration.';
COMMENT ON COLUMN usage_events.timer_duration IS 'Seconds the gateway timer was set to, > 0.';
COMMENT ON COLUMN usage_events.updated_at IS 'LWW key, part 1 (the first write''s; events are append-only).';
COMMENT ON COLUMN usage_events.updated_by IS 'Device id of the write.';
COMMENT ON COLUMN usage_events.server_version IS 'Per-user change number of the write.';
COMMENT ON COLUMN usage_events.synced_at IS 'Server time the write was accepted.';
COMMENT ON COLUMN usage_events.deleted_at IS 'Always NULL: events are never deleted (kept for the uniform sync fields).';

-- ---------------------------------------------------------------------------------------
-- Derived collections: computed by the server, one row per user, read-only to devices.
-- ---------------------------------------------------------------------------------------
CREATE TABLE global_streaks (
    tenant_id           uuid NOT NULL,
    user_id             text NOT NULL,
    id                  uuid NOT NULL,
    current_streak      integer NOT NULL CHECK (current_streak >= 0),
    longest_streak      integer NOT NULL,
    total_complete_days integer NOT NULL CHECK (total_complete_days >= 0),
    last_complete_date  date,
    computed_for        date NOT NULL,
    updated_at          timestamptz(3) NOT NULL,
    updated_by          text NOT NULL CHECK (char_length(updated_by) BETWEEN 1 AND 100),
    server_version      bigint NOT NULL CHECK (server_version > 0),
    synced_at           timestamptz NOT NULL DEFAULT now(),
    deleted_at          timestamptz,
    PRIMARY KEY (tenant_id, user_id),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, user_id) ON DELETE CASCADE,
    CONSTRAINT global_streaks_order CHECK (longest_streak >= current_streak AND total_complete_days >= longest_streak),
    CONSTRAINT global_streaks_last_date CHECK (current_streak = 0 OR last_complete_date IS NOT NULL)
);
CREATE UNIQUE INDEX global_streaks_pull ON global_streaks (tenant_id, user_id, server_version);
COMMENT ON TABLE global_streaks IS 'globalStreak collection (derived): the user''s day streak over all habits, recomputed by the server.';
COMMENT ON COLUMN global_streaks.tenant_id IS 'Owning tenant.';
COMMENT ON COLUMN global_streaks.user_id IS 'Owning user.';
COMMENT ON COLUMN global_streaks.id IS 'The user''s derived_record_id.';
COMMENT ON COLUMN global_streaks.current_streak IS 'Complete days in the run ending today or yesterday (rest days skipped).';
COMMENT ON COLUMN global_streaks.longest_streak IS 'Longest run of complete days, ≥ current_streak.';
COMMENT ON COLUMN global_streaks.total_complete_days IS 'Number of complete days ever.';
COMMENT ON COLUMN global_streaks.last_complete_date IS 'Latest complete day; set whenever current_streak > 0.';
COMMENT ON COLUMN global_streaks.computed_for IS 'The user''s calendar day this was computed for.';
COMMENT ON COLUMN global_streaks.updated_at IS 'When the server computed it.';
COMMENT ON COLUMN global_streaks.updated_by IS 'Always ''server''.';
COMMENT ON COLUMN global_streaks.server_version IS 'Per-user change number of the latest computation.';
COMMENT ON COLUMN global_streaks.synced_at IS 'Server time of the computation.';
COMMENT ON COLUMN global_streaks.deleted_at IS 'Always NULL.';

CREATE TABLE user_progress (
    tenant_id            uuid NOT NULL,
    user_id              text NOT NULL,
    id                   uuid NOT NULL,
    total_xp             bigint NOT NULL CHECK (total_xp >= 0),
    current_level        integer NOT NULL CHECK (current_level >= 1),
    xp_for_current_level bigint NOT NULL CHECK (xp_for_current_level >= 0),
    xp_for_next_level    bigint NOT NULL CHECK (xp_for_next_level > 0),
    updated_at           timestamptz(3) NOT NULL,
    updated_by           text NOT NULL CHECK (char_length(updated_by) BETWEEN 1 AND 100),
    server_version       bigint NOT NULL CHECK (server_version > 0),
    synced_at            timestamptz NOT NULL DEFAULT now(),
    deleted_at           timestamptz,
    PRIMARY KEY (tenant_id, user_id),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, user_id) ON DELETE CASCADE,
    CONSTRAINT user_progress_level_math CHECK (
        total_xp >= 300::bigint * (current_level - 1) * (current_level - 1)
        AND total_xp < 300::bigint * current_level * current_level
        AND xp_for_current_level = total_xp - 300::bigint * (current_level - 1) * (current_level - 1)
        AND xp_for_next_level = 300::bigint * current_level * current_level - 300::bigint * (current_level - 1) * (current_level - 1))
);
CREATE UNIQUE INDEX user_progress_pull ON user_progress (tenant_id, user_id, server_version);
COMMENT ON TABLE user_progress IS 'userProgress collection (derived): XP total and level from the ledger. Level L starts at 300·(L−1)² XP.';
COMMENT ON COLUMN user_progress.tenant_id IS 'Owning tenant.';
COMMENT ON COLUMN user_progress.user_id IS 'Owning user.';
COMMENT ON COLUMN user_progress.id IS 'The user''s derived_record_id.';
COMMENT ON COLUMN user_progress.total_xp IS 'max(0, sum of xp_transactions.amount).';
COMMENT ON COLUMN user_progress.current_level IS 'Level, from 1.';
COMMENT ON COLUMN user_progress.xp_for_current_level IS 'XP earned within the current level.';
COMMENT ON COLUMN user_progress.xp_for_next_level IS 'XP the current level spans: 300·L² − 300·(L−1)².';
COMMENT ON COLUMN user_progress.updated_at IS 'When the server computed it.';
COMMENT ON COLUMN user_progress.updated_by IS 'Always ''server''.';
COMMENT ON COLUMN user_progress.server_version IS 'Per-user change number of the latest computation.';
COMMENT ON COLUMN user_progress.synced_at IS 'Server time of the computation.';
COMMENT ON COLUMN user_progress.deleted_at IS 'Always NULL.';

CREATE TABLE usage_streaks (
    tenant_id          uuid NOT NULL,
    user_id            text NOT NULL,
    id                 uuid NOT NULL,
    start_date         date,
    current_day_count  integer NOT NULL CHECK (current_day_count >= 0),
    last_activity_date date,
    computed_for       date NOT NULL,
    updated_at         timestamptz(3) NOT NULL,
    updated_by         text NOT NULL CHECK (char_length(updated_by) BETWEEN 1 AND 100),
    server_version     bigint NOT NULL CHECK (server_version > 0),
    synced_at          timestamptz NOT NULL DEFAULT now(),
    deleted_at         timestamptz,
    PRIMARY KEY (tenant_id, user_id),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, user_id) ON DELETE CASCADE,
    CONSTRAINT usage_streaks_dates CHECK (current_day_count = 0 OR (start_date IS NOT NULL AND last_activity_date IS NOT NULL AND start_date <= last_activity_date))
);
CREATE UNIQUE INDEX usage_streaks_pull ON usage_streaks (tenant_id, user_id, server_version);
COMMENT ON TABLE usage_streaks IS 'usageStreak collection (derived, seed 002 Streak): consecutive days with at least one exit_to_focus event.';
COMMENT ON COLUMN usage_streaks.tenant_id IS 'Owning tenant.';
COMMENT ON COLUMN usage_streaks.user_id IS 'Owning user.';
COMMENT ON COLUMN usage_streaks.id IS 'The user''s derived_record_id.';
COMMENT ON COLUMN usage_streaks.start_date IS 'First day of the current run, or NULL.';
COMMENT ON COLUMN usage_streaks.current_day_count IS 'Days in the current run.';
COMMENT ON COLUMN usage_streaks.last_activity_date IS 'Latest day with a conscious exit, or NULL.';
COMMENT ON COLUMN usage_streaks.computed_for IS 'The user''s calendar day this was computed for.';
COMMENT ON COLUMN usage_streaks.updated_at IS 'When the server computed it.';
COMMENT ON COLUMN usage_streaks.updated_by IS 'Always ''server''.';
COMMENT ON COLUMN usage_streaks.server_version IS 'Per-user change number of the latest computation.';
COMMENT ON COLUMN usage_streaks.synced_at IS 'Server time of the computation.';
COMMENT ON COLUMN usage_streaks.deleted_at IS 'Always NULL.';

-- ---------------------------------------------------------------------------------------
-- Push idempotency, the conflict log, data migrations, and the legacy import archive.
-- ---------------------------------------------------------------------------------------
CREATE TABLE push_batches (
    tenant_id       uuid NOT NULL,
    user_id         text NOT NULL,
    device_id       text NOT NULL CHECK (char_length(device_id) BETWEEN 1 AND 100),
    batch_id        uuid NOT NULL,
    request_sha256  bytea NOT NULL CHECK (octet_length(request_sha256) = 32),
    response_status integer NOT NULL CHECK (response_status BETWEEN 200 AND 599),
    response_body   bytea NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, user_id, device_id, batch_id),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, user_id) ON DELETE CASCADE
);
CREATE INDEX push_batches_by_age ON push_batches (tenant_id, created_at);
COMMENT ON TABLE push_batches IS 'Idempotency records: the first response to each pushed batch, returned again byte for byte on retry. Purged after the retention (at least 7 days). Not readable by analysts.';
COMMENT ON COLUMN push_batches.tenant_id IS 'Owning tenant.';
COMMENT ON COLUMN push_batches.user_id IS 'Owning user.';
COMMENT ON COLUMN push_batches.device_id IS 'Device that pushed.';
COMMENT ON COLUMN push_batches.batch_id IS 'The device''s batchId.';
COMMENT ON COLUMN push_batches.request_sha256 IS 'SHA-256 of the normalised request, to refuse the same batchId with other content (409).';
COMMENT ON COLUMN push_batches.response_status IS 'HTTP status of the first response.';
COMMENT ON COLUMN push_batches.response_body IS 'Exact bytes of the first response.';
COMMENT ON COLUMN push_batches.created_at IS 'When the batch was first applied.';

CREATE TABLE conflict_log (
    tenant_id           uuid NOT NULL,
    user_id             text NOT NULL,
    id                  bigint GENERATED ALWAYS AS IDENTITY,
    collection          text NOT NULL CHECK (char_length(collection) BETWEEN 1 AND 100),
    record_id           text CHECK (char_length(record_id) <= 200),
    outcome             text NOT NULL CHECK (outcome IN ('superseded', 'rejected')),
    error_code          text CHECK (char_length(error_code) <= 100),
    error_field         text CHECK (char_length(error_field) <= 200),
    error_message       text CHECK (char_length(error_message) <= 2000),
    op                  text CHECK (op IN ('upsert', 'delete')),
    incoming_payload    jsonb,
    incoming_updated_at timestamptz(3),
    incoming_updated_by text,
    winning_updated_at  timestamptz(3),
    winning_updated_by  text,
    device_id           text,
    batch_id            uuid,
    logged_at           timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, user_id, id),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, user_id) ON DELETE CASCADE,
    CONSTRAINT conflict_log_rejection_code CHECK (outcome <> 'rejected' OR error_code IS NOT NULL)
);
COMMENT ON TABLE conflict_log IS 'Every pushed change that did not win: superseded by a newer write, or rejected as invalid. Nothing is lost silently.';
COMMENT ON COLUMN conflict_log.tenant_id IS 'Owning tenant.';
COMMENT ON COLUMN conflict_log.user_id IS 'Owning user.';
COMMENT ON COLUMN conflict_log.id IS 'Log entry number.';
COMMENT ON COLUMN conflict_log.collection IS 'Wire collection name as sent (may be unknown for rejected changes).';
COMMENT ON COLUMN conflict_log.record_id IS 'Record id as sent.';
COMMENT ON COLUMN conflict_log.outcome IS 'superseded (a newer write won) or rejected (invalid).';
COMMENT ON COLUMN conflict_log.error_code IS 'Machine-readable rejection code (invalid_field, unknown_reference, …).';
COMMENT ON COLUMN conflict_log.error_field IS 'Field the rejection is about, if any.';
COMMENT ON COLUMN conflict_log.error_message IS 'Human-readable rejection message.';
COMMENT ON COLUMN conflict_log.op IS 'upsert or delete, as sent.';
COMMENT ON COLUMN conflict_log.incoming_payload IS 'The losing change as sent.';
COMMENT ON COLUMN conflict_log.incoming_updated_at IS 'LWW key of the losing change, part 1.';
COMMENT ON COLUMN conflict_log.incoming_updated_by IS 'LWW key of the losing change, part 2 (its device).';
COMMENT ON COLUMN conflict_log.winning_updated_at IS 'LWW key of the stored winner, part 1 (superseded only).';
COMMENT ON COLUMN conflict_log.winning_updated_by IS 'LWW key of the stored winner, part 2.';
COMMENT ON COLUMN conflict_log.device_id IS 'Device that pushed the losing change.';
COMMENT ON COLUMN conflict_log.batch_id IS 'Batch it came in.';
COMMENT ON COLUMN conflict_log.logged_at IS 'When it was logged.';

CREATE TABLE data_migrations (
    tenant_id    uuid NOT NULL,
    user_id      text NOT NULL,
    name         text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    version      integer NOT NULL DEFAULT 1 CHECK (version >= 1),
    status       text NOT NULL CHECK (status IN ('running', 'completed', 'failed')),
    started_at   timestamptz NOT NULL DEFAULT now(),
    completed_at timestamptz,
    details      jsonb NOT NULL DEFAULT '{}'::jsonb,
    PRIMARY KEY (tenant_id, user_id, name),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, user_id) ON DELETE CASCADE,
    CONSTRAINT data_migrations_completion CHECK ((status = 'running') = (completed_at IS NULL))
);
COMMENT ON TABLE data_migrations IS 'Data migrations (transforming a user''s data, not the schema), tracked per tenant and user like seed 004''s MigrationRecord. The legacy import is the first.';
COMMENT ON COLUMN data_migrations.tenant_id IS 'Owning tenant.';
COMMENT ON COLUMN data_migrations.user_id IS 'Owning user.';
COMMENT ON COLUMN data_migrations.name IS 'Which data migration (for example legacy_import:<sha256 of the file>).';
COMMENT ON COLUMN data_migrations.version IS 'Version of the migration''s code that ran.';
COMMENT ON COLUMN data_migrations.status IS 'running, completed or failed.';
COMMENT ON COLUMN data_migrations.started_at IS 'When it started.';
COMMENT ON COLUMN data_migrations.completed_at IS 'When it finished; NULL while running.';
COMMENT ON COLUMN data_migrations.details IS 'Report: counts, warnings, what was skipped.';

CREATE TABLE legacy_import_archive (
    tenant_id     uuid NOT NULL,
    user_id       text NOT NULL,
    source_sha256 text NOT NULL CHECK (source_sha256 ~ '^[0-9a-f]{64}$'),
    position      integer NOT NULL CHECK (position >= 0),
    habit_id      uuid,
    source        jsonb NOT NULL,
    imported_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, user_id, source_sha256, position),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, user_id) ON DELETE CASCADE
);
COMMENT ON TABLE legacy_import_archive IS 'Each imported legacy habit object verbatim, so a later importer can run again from the source.';
COMMENT ON COLUMN legacy_import_archive.tenant_id IS 'Owning tenant.';
COMMENT ON COLUMN legacy_import_archive.user_id IS 'Owning user.';
COMMENT ON COLUMN legacy_import_archive.source_sha256 IS 'Hex SHA-256 of the imported file.';
COMMENT ON COLUMN legacy_import_archive.position IS 'Index of the habit in the file.';
COMMENT ON COLUMN legacy_import_archive.habit_id IS 'The habit''s id, when it had one.';
COMMENT ON COLUMN legacy_import_archive.source IS 'The original habit object, as it was in the file.';
COMMENT ON COLUMN legacy_import_archive.imported_at IS 'When it was imported.';

-- ---------------------------------------------------------------------------------------
-- Usage event partitions. New months are created ahead by migrations and maintenance run;
-- the DEFAULT partition catches anything outside them.
-- ---------------------------------------------------------------------------------------
CREATE FUNCTION habitsync_ensure_usage_event_partitions(from_month date, to_month date) RETURNS integer
    LANGUAGE plpgsql
    AS $$
DECLARE
    month date := date_trunc('month', from_month)::date;
    created integer := 0;
    partition_name text;
BEGIN
    WHILE month <= to_month LOOP
        partition_name := format('usage_events_%s', to_char(month, 'YYYY_MM'));
        IF to_regclass(partition_name) IS NULL THEN
            -- Bounds spelled with an explicit +00 offset: independent of the session's TimeZone.
            EXECUTE format('CREATE TABLE %I PARTITION OF usage_events FOR VALUES FROM (%L) TO (%L)',
                           partition_name, to_char(month, 'YYYY-MM-DD') || ' 00:00:00+00',
                           to_char((month + interval '1 month')::date, 'YYYY-MM-DD') || ' 00:00:00+00');
            PERFORM habitsync_secure_usage_event_partition(partition_name, format('usage_events rows of %s (UTC month).', to_char(month, 'YYYY-MM')));
            created := created + 1;
        END IF;
        month := (month + interval '1 month')::date;
    END LOOP;
    RETURN created;
END
$$;
COMMENT ON FUNCTION habitsync_ensure_usage_event_partitions(date, date) IS 'Creates the monthly usage_events partitions from from_month to to_month that do not exist yet; returns how many it created.';

-- A partition queried directly would bypass its parent's policies: give each one its own.
CREATE FUNCTION habitsync_secure_usage_event_partition(partition_name text, description text) RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    parent_column record;
BEGIN
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', partition_name);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', partition_name);
    EXECUTE format('CREATE POLICY tenant_isolation ON %I USING (habitsync_row_visible(tenant_id, user_id)) WITH CHECK (habitsync_row_visible(tenant_id, user_id))', partition_name);
    EXECUTE format('COMMENT ON TABLE %I IS %L', partition_name, description);
    FOR parent_column IN
        SELECT a.attname, col_description('usage_events'::regclass, a.attnum) AS comment
        FROM pg_attribute a
        WHERE a.attrelid = 'usage_events'::regclass AND a.attnum > 0 AND NOT a.attisdropped
    LOOP
        EXECUTE format('COMMENT ON COLUMN %I.%I IS %L', partition_name, parent_column.attname, parent_column.comment);
    END LOOP;
END
$$;
COMMENT ON FUNCTION habitsync_secure_usage_event_partition(text, text) IS 'Enables and forces row-level security on a usage_events partition and copies the parent''s comments.';

CREATE TABLE usage_events_default PARTITION OF usage_events DEFAULT;
SELECT habitsync_secure_usage_event_partition('usage_events_default', 'usage_events rows outside every monthly partition.');
SELECT habitsync_ensure_usage_event_partitions('2024-01-01', '2028-12-01');

-- ---------------------------------------------------------------------------------------
-- Row-level security: enabled and forced (the owner too) on every per-tenant table.
-- ---------------------------------------------------------------------------------------
ALTER TABLE tenants ENABLE ROW LEVEL SECURITY;
-- Not forced: the owner (admin commands: tenant create, list) manages the registry itself.
CREATE POLICY tenant_isolation ON tenants USING (id = habitsync_current_tenant_id()) WITH CHECK (id = habitsync_current_tenant_id());

ALTER TABLE tenant_keys ENABLE ROW LEVEL SECURITY;
ALTER TABLE tenant_keys FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON tenant_keys USING (tenant_id = habitsync_current_tenant_id()) WITH CHECK (tenant_id = habitsync_current_tenant_id());

DO $$
DECLARE
    table_name text;
BEGIN
    FOREACH table_name IN ARRAY ARRAY[
        'users', 'devices', 'habits', 'reminders', 'daily_progress', 'xp_transactions', 'achievements',
        'focus_sessions', 'selected_apps', 'user_settings', 'usage_events', 'global_streaks', 'user_progress',
        'usage_streaks', 'push_batches', 'conflict_log', 'data_migrations', 'legacy_import_archive']
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', table_name);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', table_name);
        EXECUTE format('CREATE POLICY tenant_isolation ON %I USING (habitsync_row_visible(tenant_id, user_id)) WITH CHECK (habitsync_row_visible(tenant_id, user_id))', table_name);
    END LOOP;
END
$$;

-- ---------------------------------------------------------------------------------------
-- The request role: reads and writes data, owns nothing, cannot bypass row-level security.
-- ---------------------------------------------------------------------------------------
GRANT SELECT ON tenants TO habitsync_app;
GRANT SELECT ON tenant_keys TO habitsync_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON
    users, devices, habits, reminders, daily_progress, xp_transactions, achievements, focus_sessions,
    selected_apps, user_settings, usage_events, global_streaks, user_progress, usage_streaks,
    push_batches, conflict_log, data_migrations, legacy_import_archive
    TO habitsync_app;
-- /readyz reads the schema version as the request role.
GRANT SELECT ON habitsync_schema_migrations TO habitsync_app;
