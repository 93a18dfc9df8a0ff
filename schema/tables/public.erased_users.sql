-- public.erased_users
-- Users whose accounts were erased: their pushes and pulls answer 410 account_erased. No user id: user_hash is sha256(erasure key of the tenant || user id). An admin removes a marker (user allow-again) to let the user start over.

CREATE TABLE public.erased_users (
    -- Owning tenant.
    tenant_id uuid NOT NULL,
    -- sha256(erasure_keys.key || convert_to(user_id, 'UTF8')).
    user_hash bytea NOT NULL,
    -- When the erasure began.
    erased_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE public.erased_users ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.erased_users FORCE ROW LEVEL SECURITY;

-- Constraints
ALTER TABLE public.erased_users ADD CONSTRAINT erased_users_pkey PRIMARY KEY (tenant_id, user_hash);
ALTER TABLE public.erased_users ADD CONSTRAINT erased_users_user_hash_check CHECK ((octet_length(user_hash) = 32));

-- Policies
CREATE POLICY tenant_isolation ON public.erased_users AS PERMISSIVE FOR ALL TO public
    USING ((tenant_id = habitsync_current_tenant_id()))
    WITH CHECK ((tenant_id = habitsync_current_tenant_id()));

-- Privileges
GRANT INSERT, SELECT ON public.erased_users TO habitsync_app;
