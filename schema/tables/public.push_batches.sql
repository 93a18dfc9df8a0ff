-- public.push_batches
-- Idempotency records: the first response to each pushed batch, returned again byte for byte on retry. Purged after the retention (at least 7 days). Not readable by analysts.

CREATE TABLE public.push_batches (
    -- Owning tenant.
    tenant_id uuid NOT NULL,
    -- Owning user.
    user_id text NOT NULL,
    -- Device that pushed.
    device_id text NOT NULL,
    -- The device's batchId.
    batch_id uuid NOT NULL,
    -- SHA-256 of the normalised request, to refuse the same batchId with other content (409).
    request_sha256 bytea NOT NULL,
    -- HTTP status of the first response.
    response_status integer NOT NULL,
    -- Exact bytes of the first response.
    response_body bytea NOT NULL,
    -- When the batch was first applied.
    created_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE public.push_batches ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.push_batches FORCE ROW LEVEL SECURITY;

-- Constraints
ALTER TABLE public.push_batches ADD CONSTRAINT push_batches_device_id_check CHECK (((char_length(device_id) >= 1) AND (char_length(device_id) <= 100)));
ALTER TABLE public.push_batches ADD CONSTRAINT push_batches_pkey PRIMARY KEY (tenant_id, user_id, device_id, batch_id);
ALTER TABLE public.push_batches ADD CONSTRAINT push_batches_request_sha256_check CHECK ((octet_length(request_sha256) = 32));
ALTER TABLE public.push_batches ADD CONSTRAINT push_batches_response_status_check CHECK (((response_status >= 200) AND (response_status <= 599)));
ALTER TABLE public.push_batches ADD CONSTRAINT push_batches_tenant_id_user_id_fkey FOREIGN KEY (tenant_id, user_id) REFERENCES users(tenant_id, user_id) ON DELETE CASCADE;

-- Indexes
CREATE INDEX push_batches_by_age ON public.push_batches USING btree (tenant_id, created_at);

-- Policies
CREATE POLICY tenant_isolation ON public.push_batches AS PERMISSIVE FOR ALL TO public
    USING (habitsync_row_visible(tenant_id, user_id))
    WITH CHECK (habitsync_row_visible(tenant_id, user_id));

-- Privileges
GRANT DELETE, INSERT, SELECT, UPDATE ON public.push_batches TO habitsync_app;
