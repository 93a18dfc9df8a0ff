-- public.usage_events
-- usageEvents collection (UsageEvent, seed 002): append-only gateway events, partitioned by month of occurred_at; old months are moved to the archive schema by maintenance run.

CREATE TABLE public.usage_events (
    -- Owning tenant.
    tenant_id uuid NOT NULL,
    -- Owning user.
    user_id text NOT NULL,
    -- Record id.
    id uuid NOT NULL,
    -- exit_to_focus (a conscious exit), deepen_pause, or proceed_to_app.
    event_type text NOT NULL,
    -- Wire timestamp: when the event happened; the partition key.
    occurred_at timestamp(3) with time zone NOT NULL,
    -- App the user was opening; required for proceed_to_app.
    target_app_name text,
    -- Seconds the user paused, 0 … timer_duration.
    pause_duration double precision NOT NULL,
    -- Seconds the gateway timer was set to, > 0.
    timer_duration double precision NOT NULL,
    -- LWW key, part 1 (the first write's; events are append-only).
    updated_at timestamp(3) with time zone NOT NULL,
    -- Device id of the write.
    updated_by text NOT NULL,
    -- Per-user change number of the write.
    server_version bigint NOT NULL,
    -- Server time the write was accepted.
    synced_at timestamp with time zone DEFAULT now() NOT NULL,
    -- Always NULL: events are never deleted (kept for the uniform sync fields).
    deleted_at timestamp with time zone
) PARTITION BY RANGE (occurred_at);
ALTER TABLE public.usage_events ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.usage_events FORCE ROW LEVEL SECURITY;

-- Constraints
ALTER TABLE public.usage_events ADD CONSTRAINT usage_events_event_type_check CHECK ((event_type = ANY (ARRAY['exit_to_focus'::text, 'deepen_pause'::text, 'proceed_to_app'::text])));
ALTER TABLE public.usage_events ADD CONSTRAINT usage_events_pause_duration_check CHECK ((pause_duration >= (0)::double precision));
ALTER TABLE public.usage_events ADD CONSTRAINT usage_events_pause_within_timer CHECK ((pause_duration <= timer_duration));
ALTER TABLE public.usage_events ADD CONSTRAINT usage_events_pkey PRIMARY KEY (tenant_id, user_id, id, occurred_at);
ALTER TABLE public.usage_events ADD CONSTRAINT usage_events_proceed_target CHECK (((event_type <> 'proceed_to_app'::text) OR COALESCE((char_length(btrim(target_app_name)) >= 1), false)));
ALTER TABLE public.usage_events ADD CONSTRAINT usage_events_server_version_check CHECK ((server_version > 0));
ALTER TABLE public.usage_events ADD CONSTRAINT usage_events_target_app_name_check CHECK ((char_length(target_app_name) <= 200));
ALTER TABLE public.usage_events ADD CONSTRAINT usage_events_timer_duration_check CHECK (((timer_duration > (0)::double precision) AND (timer_duration < 'Infinity'::double precision)));
ALTER TABLE public.usage_events ADD CONSTRAINT usage_events_updated_by_check CHECK (((char_length(updated_by) >= 1) AND (char_length(updated_by) <= 100)));

-- Indexes
CREATE INDEX usage_events_by_time ON ONLY public.usage_events USING btree (tenant_id, user_id, occurred_at);
CREATE INDEX usage_events_pull ON ONLY public.usage_events USING btree (tenant_id, user_id, server_version);

-- Policies
CREATE POLICY analyst_read ON public.usage_events AS PERMISSIVE FOR SELECT TO habitsync_analyst
    USING (true);
CREATE POLICY tenant_isolation ON public.usage_events AS PERMISSIVE FOR ALL TO public
    USING (habitsync_row_visible(tenant_id, user_id))
    WITH CHECK (habitsync_row_visible(tenant_id, user_id));

-- Privileges
GRANT SELECT ON public.usage_events TO habitsync_analyst;
GRANT DELETE, INSERT, SELECT, UPDATE ON public.usage_events TO habitsync_app;
