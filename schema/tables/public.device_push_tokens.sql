-- public.device_push_tokens
-- Each device's APNs token (PUT /v1/devices/{id}/push-token), and whether a wake is due it.

CREATE TABLE public.device_push_tokens (
    -- The tenant.
    tenant_id uuid NOT NULL,
    -- The user.
    user_id text NOT NULL,
    -- The device (its X-Device-Id).
    device_id text NOT NULL,
    -- The APNs device token, in lowercase hex. Replaced when the device registers again; deleted when APNs says it is no longer valid.
    token text NOT NULL,
    -- When the device last registered it.
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    -- Another device of the user pushed a change since the last wake.
    wake_due boolean DEFAULT false NOT NULL,
    -- When a wake was last sent to it.
    last_wake_at timestamp with time zone
);
ALTER TABLE public.device_push_tokens ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.device_push_tokens FORCE ROW LEVEL SECURITY;

-- Constraints
ALTER TABLE public.device_push_tokens ADD CONSTRAINT device_push_tokens_device_id_check CHECK (((char_length(device_id) >= 1) AND (char_length(device_id) <= 100)));
ALTER TABLE public.device_push_tokens ADD CONSTRAINT device_push_tokens_pkey PRIMARY KEY (tenant_id, user_id, device_id);
ALTER TABLE public.device_push_tokens ADD CONSTRAINT device_push_tokens_tenant_id_user_id_fkey FOREIGN KEY (tenant_id, user_id) REFERENCES users(tenant_id, user_id) ON DELETE CASCADE;
ALTER TABLE public.device_push_tokens ADD CONSTRAINT device_push_tokens_token_check CHECK (((token ~ '^[0-9a-f]+$'::text) AND ((octet_length(token) >= 16) AND (octet_length(token) <= 400)) AND ((octet_length(token) % 2) = 0)));

-- Indexes
CREATE INDEX device_push_tokens_due ON public.device_push_tokens USING btree (last_wake_at NULLS FIRST) WHERE wake_due;

-- Policies
CREATE POLICY tenant_isolation ON public.device_push_tokens AS PERMISSIVE FOR ALL TO public
    USING (habitsync_row_visible(tenant_id, user_id))
    WITH CHECK (habitsync_row_visible(tenant_id, user_id));
CREATE POLICY waker ON public.device_push_tokens AS PERMISSIVE FOR ALL TO public
    USING ((current_setting('habitsync.scope'::text, true) = 'wakes'::text))
    WITH CHECK ((current_setting('habitsync.scope'::text, true) = 'wakes'::text));

-- Privileges
GRANT DELETE, INSERT, SELECT, UPDATE ON public.device_push_tokens TO habitsync_app;
