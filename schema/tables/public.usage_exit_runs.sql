-- public.usage_exit_runs
-- Server bookkeeping, not synced: a user's maximal runs of consecutive calendar days (in users.exit_runs_zone) with at least one exit_to_focus usage event. The usage streak is the latest run. Kept by a trigger on usage_event_ids; rebuilt whole when the user's time zone changes.

CREATE TABLE public.usage_exit_runs (
    -- Owning tenant.
    tenant_id uuid NOT NULL,
    -- Owning user.
    user_id text NOT NULL,
    -- The run's first day.
    first_day date NOT NULL,
    -- The run's last day.
    last_day date NOT NULL
);
ALTER TABLE public.usage_exit_runs ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.usage_exit_runs FORCE ROW LEVEL SECURITY;

-- Constraints
ALTER TABLE public.usage_exit_runs ADD CONSTRAINT usage_exit_runs_check CHECK ((first_day <= last_day));
ALTER TABLE public.usage_exit_runs ADD CONSTRAINT usage_exit_runs_pkey PRIMARY KEY (tenant_id, user_id, first_day);
ALTER TABLE public.usage_exit_runs ADD CONSTRAINT usage_exit_runs_tenant_id_user_id_fkey FOREIGN KEY (tenant_id, user_id) REFERENCES users(tenant_id, user_id) ON DELETE CASCADE;

-- Indexes
CREATE UNIQUE INDEX usage_exit_runs_by_last_day ON public.usage_exit_runs USING btree (tenant_id, user_id, last_day);

-- Policies
CREATE POLICY analyst_read ON public.usage_exit_runs AS PERMISSIVE FOR SELECT TO habitsync_analyst
    USING (true);
CREATE POLICY tenant_isolation ON public.usage_exit_runs AS PERMISSIVE FOR ALL TO public
    USING (habitsync_row_visible(tenant_id, user_id))
    WITH CHECK (habitsync_row_visible(tenant_id, user_id));

-- Privileges
GRANT SELECT ON public.usage_exit_runs TO habitsync_analyst;
GRANT DELETE, INSERT, SELECT ON public.usage_exit_runs TO habitsync_app;
