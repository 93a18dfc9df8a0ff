-- public.daily_progress_additions
-- Increments of a day's progress made after its latest set (daily_progress.count_set_*), one per pushed change: progress_count = count_set_value + their sum.

CREATE TABLE public.daily_progress_additions (
    -- Owning tenant.
    tenant_id uuid NOT NULL,
    -- Owning user.
    user_id text NOT NULL,
    -- The day (daily_progress.id, its canonical id).
    progress_id uuid NOT NULL,
    -- The change's updatedAt: when the device made the addition (LWW key, part 1).
    made_at timestamp(3) with time zone NOT NULL,
    -- The device that made it (LWW key, part 2).
    made_by text NOT NULL,
    -- The push batch that carried it (a batch is applied once).
    batch_id uuid NOT NULL,
    -- Its change's index in that batch.
    change_index integer NOT NULL,
    -- What it added (negative: took away), -1000…1000.
    delta integer NOT NULL
);
ALTER TABLE public.daily_progress_additions ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.daily_progress_additions FORCE ROW LEVEL SECURITY;

-- Constraints
ALTER TABLE public.daily_progress_additions ADD CONSTRAINT daily_progress_additions_change_index_check CHECK ((change_index >= 0));
ALTER TABLE public.daily_progress_additions ADD CONSTRAINT daily_progress_additions_delta_check CHECK (((delta >= '-1000'::integer) AND (delta <= 1000)));
ALTER TABLE public.daily_progress_additions ADD CONSTRAINT daily_progress_additions_made_by_check CHECK (((char_length(made_by) >= 1) AND (char_length(made_by) <= 100)));
ALTER TABLE public.daily_progress_additions ADD CONSTRAINT daily_progress_additions_pkey PRIMARY KEY (tenant_id, user_id, progress_id, made_by, batch_id, change_index);
ALTER TABLE public.daily_progress_additions ADD CONSTRAINT daily_progress_additions_tenant_id_user_id_progress_id_fkey FOREIGN KEY (tenant_id, user_id, progress_id) REFERENCES daily_progress(tenant_id, user_id, id) ON DELETE CASCADE;

-- Policies
CREATE POLICY analyst_read ON public.daily_progress_additions AS PERMISSIVE FOR SELECT TO habitsync_analyst
    USING (true);
CREATE POLICY tenant_isolation ON public.daily_progress_additions AS PERMISSIVE FOR ALL TO public
    USING (habitsync_row_visible(tenant_id, user_id))
    WITH CHECK (habitsync_row_visible(tenant_id, user_id));

-- Privileges
GRANT SELECT ON public.daily_progress_additions TO habitsync_analyst;
GRANT DELETE, INSERT, SELECT ON public.daily_progress_additions TO habitsync_app;
