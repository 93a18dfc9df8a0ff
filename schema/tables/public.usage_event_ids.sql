-- public.usage_event_ids
-- Every usage event id ever stored per user, with its partition key: the append-only rule's lookup, without probing every monthly partition.

CREATE TABLE public.usage_event_ids (
    -- Owning tenant.
    tenant_id uuid NOT NULL,
    -- Owning user.
    user_id text NOT NULL,
    -- The usage event's id.
    id uuid NOT NULL,
    -- Its occurred_at, which locates its partition.
    occurred_at timestamp(3) with time zone NOT NULL,
    -- Whether the event is an exit_to_focus (a conscious exit), which the usage streak counts; kept when the event's month is archived.
    is_exit boolean DEFAULT false NOT NULL
);
ALTER TABLE public.usage_event_ids ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.usage_event_ids FORCE ROW LEVEL SECURITY;

-- Constraints
ALTER TABLE public.usage_event_ids ADD CONSTRAINT usage_event_ids_pkey PRIMARY KEY (tenant_id, user_id, id);

-- Indexes
CREATE INDEX usage_event_ids_exits ON public.usage_event_ids USING btree (tenant_id, user_id, occurred_at) WHERE is_exit;

-- Triggers
CREATE TRIGGER exit_runs_after_delete AFTER DELETE ON public.usage_event_ids REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION habitsync_exit_runs_after_delete();
CREATE TRIGGER exit_runs_after_insert AFTER INSERT ON public.usage_event_ids REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION habitsync_exit_runs_after_insert();

-- Policies
CREATE POLICY analyst_read ON public.usage_event_ids AS PERMISSIVE FOR SELECT TO habitsync_analyst
    USING (true);
CREATE POLICY tenant_isolation ON public.usage_event_ids AS PERMISSIVE FOR ALL TO public
    USING (habitsync_row_visible(tenant_id, user_id))
    WITH CHECK (habitsync_row_visible(tenant_id, user_id));

-- Privileges
GRANT SELECT ON public.usage_event_ids TO habitsync_analyst;
GRANT DELETE, INSERT, SELECT ON public.usage_event_ids TO habitsync_app;
