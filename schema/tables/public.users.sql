-- public.users
-- Users of a tenant, created on their first request. The unit of sync.

CREATE TABLE public.users (
    -- Owning tenant.
    tenant_id uuid NOT NULL,
    -- The JWT sub claim, unique within the tenant.
    user_id text NOT NULL,
    -- Last server_version allocated to this user. Incremented under the row lock inside each writing transaction, so versions commit in order and a pull never misses a change.
    change_counter bigint DEFAULT 0 NOT NULL,
    -- IANA time zone of the user's calendar days (copied from userSettings.timezone).
    time_zone text DEFAULT 'UTC'::text NOT NULL,
    -- The id of the user's derived records (globalStreak, userProgress, usageStreak) and settings, fixed for the user's lifetime.
    derived_record_id uuid DEFAULT gen_random_uuid() NOT NULL,
    -- First request.
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    -- Latest request.
    last_seen_at timestamp with time zone DEFAULT now() NOT NULL,
    -- Highest server_version whose tombstone maintenance has purged; a pull cursor below it gets 410 cursor_expired.
    purged_through_version bigint DEFAULT 0 NOT NULL,
    -- Sum of the user's xp_transactions amounts (before the floor at zero that userProgress.totalXP applies), kept by triggers on xp_transactions so a push never sums the whole ledger.
    xp_ledger_sum bigint DEFAULT 0 NOT NULL,
    -- The time zone usage_exit_runs were built in; NULL or another zone than time_zone means they are rebuilt from usage_event_ids by the next recompute.
    exit_runs_zone text,
    -- The account's sync epoch, random when the row is made: an account erased and allowed again has a new one, and devices of the old account are told to discard it.
    account_epoch text DEFAULT habitsync_new_epoch() NOT NULL,
    -- sync_epoch.epoch when the row was made or the epoch last rotated.
    database_epoch text DEFAULT habitsync_database_epoch() NOT NULL,
    -- change_counter when the database epoch was last rotated: the versions a restored database holds of the user. Devices push again what they hold above it.
    restored_through bigint DEFAULT 0 NOT NULL,
    -- Per collection, the user's live records: {"habits": {"count": n, "xor": x}}, x the XOR of habitsync_digest_term(id, server_version). Kept by triggers; the last page of a pull reports it.
    record_digests jsonb DEFAULT '{}'::jsonb NOT NULL,
    -- The account was erased and allowed again (user allow-again, from migration 0033 on): a push that carries no epoch is answered account_restarted.
    account_restarted boolean DEFAULT false NOT NULL
);
ALTER TABLE public.users ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.users FORCE ROW LEVEL SECURITY;

-- Constraints
ALTER TABLE public.users ADD CONSTRAINT users_account_epoch_check CHECK ((account_epoch ~ '^[0-9a-f]{16}$'::text));
ALTER TABLE public.users ADD CONSTRAINT users_change_counter_check CHECK ((change_counter >= 0));
ALTER TABLE public.users ADD CONSTRAINT users_database_epoch_check CHECK ((database_epoch ~ '^[0-9a-f]{16}$'::text));
ALTER TABLE public.users ADD CONSTRAINT users_pkey PRIMARY KEY (tenant_id, user_id);
ALTER TABLE public.users ADD CONSTRAINT users_purged_through_version_check CHECK ((purged_through_version >= 0));
ALTER TABLE public.users ADD CONSTRAINT users_restored_through_check CHECK ((restored_through >= 0));
ALTER TABLE public.users ADD CONSTRAINT users_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES tenants(id) ON DELETE CASCADE;
ALTER TABLE public.users ADD CONSTRAINT users_time_zone_check CHECK ((time_zone ~ '^[A-Za-z0-9_+/-]{1,64}$'::text));
ALTER TABLE public.users ADD CONSTRAINT users_user_id_check CHECK (((char_length(user_id) >= 1) AND (char_length(user_id) <= 255)));

-- Triggers
CREATE TRIGGER refuse_erased_user BEFORE INSERT ON public.users FOR EACH ROW EXECUTE FUNCTION habitsync_refuse_erased_user();

-- Policies
CREATE POLICY analyst_read ON public.users AS PERMISSIVE FOR SELECT TO habitsync_analyst
    USING (true);
CREATE POLICY tenant_isolation ON public.users AS PERMISSIVE FOR ALL TO public
    USING (habitsync_row_visible(tenant_id, user_id))
    WITH CHECK (habitsync_row_visible(tenant_id, user_id));

-- Privileges
GRANT SELECT ON public.users TO habitsync_analyst;
GRANT DELETE, INSERT, SELECT, UPDATE ON public.users TO habitsync_app;
