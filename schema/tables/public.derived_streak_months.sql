-- public.derived_streak_months
-- Server bookkeeping, not synced: per user and closed calendar month, what the global streak needs of that month's days, every day taken as past. A missing row is rebuilt from daily_progress by the next recompute; triggers on daily_progress and habits delete the rows their changes can affect. The month's daily-completion XP awards were reconciled when the row was written.

CREATE TABLE public.derived_streak_months (
    -- Owning tenant.
    tenant_id uuid NOT NULL,
    -- Owning user.
    user_id text NOT NULL,
    -- The month's first day.
    month date NOT NULL,
    -- The tenant's XP per complete day when the month's awards were reconciled; a row written under another setting is rebuilt.
    daily_completion_xp integer NOT NULL,
    -- Complete days in the month.
    complete_days integer NOT NULL,
    -- The month's latest complete day, if any.
    last_complete_date date,
    -- Whether an incomplete day breaks a run inside the month.
    has_break boolean NOT NULL,
    -- Complete days before the month's first incomplete day (all of them without one).
    leading_run integer NOT NULL,
    -- Complete days after the month's last incomplete day (all of them without one).
    trailing_run integer NOT NULL,
    -- The longest run of complete days inside the month.
    longest_run integer NOT NULL
);
ALTER TABLE public.derived_streak_months ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.derived_streak_months FORCE ROW LEVEL SECURITY;

-- Constraints
ALTER TABLE public.derived_streak_months ADD CONSTRAINT derived_streak_months_check CHECK (((date_trunc('month'::text, (last_complete_date)::timestamp with time zone))::date = month));
ALTER TABLE public.derived_streak_months ADD CONSTRAINT derived_streak_months_check1 CHECK (((leading_run >= 0) AND (leading_run <= complete_days)));
ALTER TABLE public.derived_streak_months ADD CONSTRAINT derived_streak_months_check2 CHECK (((trailing_run >= 0) AND (trailing_run <= complete_days)));
ALTER TABLE public.derived_streak_months ADD CONSTRAINT derived_streak_months_check3 CHECK (((longest_run >= 0) AND (longest_run <= complete_days)));
ALTER TABLE public.derived_streak_months ADD CONSTRAINT derived_streak_months_complete_days_check CHECK (((complete_days >= 0) AND (complete_days <= 31)));
ALTER TABLE public.derived_streak_months ADD CONSTRAINT derived_streak_months_daily_completion_xp_check CHECK (((daily_completion_xp >= 0) AND (daily_completion_xp <= 100000)));
ALTER TABLE public.derived_streak_months ADD CONSTRAINT derived_streak_months_month_check CHECK ((EXTRACT(day FROM month) = (1)::numeric));
ALTER TABLE public.derived_streak_months ADD CONSTRAINT derived_streak_months_pkey PRIMARY KEY (tenant_id, user_id, month);
ALTER TABLE public.derived_streak_months ADD CONSTRAINT derived_streak_months_tenant_id_user_id_fkey FOREIGN KEY (tenant_id, user_id) REFERENCES users(tenant_id, user_id) ON DELETE CASCADE;

-- Policies
CREATE POLICY analyst_read ON public.derived_streak_months AS PERMISSIVE FOR SELECT TO habitsync_analyst
    USING (true);
CREATE POLICY tenant_isolation ON public.derived_streak_months AS PERMISSIVE FOR ALL TO public
    USING (habitsync_row_visible(tenant_id, user_id))
    WITH CHECK (habitsync_row_visible(tenant_id, user_id));

-- Privileges
GRANT SELECT ON public.derived_streak_months TO habitsync_analyst;
GRANT DELETE, INSERT, SELECT, UPDATE ON public.derived_streak_months TO habitsync_app;
