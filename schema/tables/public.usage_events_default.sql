-- public.usage_events_default
-- usage_events rows outside every monthly partition.

CREATE TABLE public.usage_events_default (
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
);
ALTER TABLE public.usage_events ATTACH PARTITION public.usage_events_default DEFAULT;
ALTER TABLE public.usage_events_default ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.usage_events_default FORCE ROW LEVEL SECURITY;

-- Policies
CREATE POLICY analyst_read ON public.usage_events_default AS PERMISSIVE FOR SELECT TO habitsync_analyst
    USING (true);
CREATE POLICY tenant_isolation ON public.usage_events_default AS PERMISSIVE FOR ALL TO public
    USING (habitsync_row_visible(tenant_id, user_id))
    WITH CHECK (habitsync_row_visible(tenant_id, user_id));

-- Privileges
GRANT SELECT ON public.usage_events_default TO habitsync_analyst;
