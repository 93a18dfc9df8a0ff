-- public.tenant_issuers
-- Identity providers whose tokens a tenant accepts (tenant add-issuer). Public configuration only: no secret.

CREATE TABLE public.tenant_issuers (
    -- The tenant whose users the tokens name.
    tenant_id uuid NOT NULL,
    -- The iss claim, exactly (Auth0's ends with /).
    issuer text NOT NULL,
    -- jwks_url (fetched), discovery (jwks_uri of <issuer>/.well-known/openid-configuration), inline (inline_keys).
    key_source text NOT NULL,
    -- For key_source jwks_url: where the issuer publishes its key set.
    jwks_url text,
    -- For key_source inline: a JWKS document or a PEM public key.
    inline_keys text,
    -- Accepted audiences; a token must name one. Empty (Cognito only): any app client of the user pool.
    audiences text[] NOT NULL,
    -- Claims read as the audience: aud, and client_id for Cognito access tokens (which carry no aud).
    audience_claims text[] DEFAULT '{aud}'::text[] NOT NULL,
    -- Accepted signature algorithms: RS256, ES256, EdDSA. Never none, never a symmetric one.
    algorithms text[] DEFAULT '{RS256,ES256}'::text[] NOT NULL,
    -- The claim naming the user (users.user_id); sub by default.
    user_claim text DEFAULT 'sub'::text NOT NULL,
    -- Longest accepted token lifetime, exp - iat (exp - now without iat).
    max_lifetime_seconds integer DEFAULT 86400 NOT NULL,
    -- The preset it was made from, if any.
    preset text,
    -- When it was added.
    created_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE public.tenant_issuers ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.tenant_issuers FORCE ROW LEVEL SECURITY;

-- Constraints
ALTER TABLE public.tenant_issuers ADD CONSTRAINT tenant_issuers_algorithms_check CHECK ((((cardinality(algorithms) >= 1) AND (cardinality(algorithms) <= 3)) AND (algorithms <@ '{RS256,ES256,EdDSA}'::text[])));
ALTER TABLE public.tenant_issuers ADD CONSTRAINT tenant_issuers_audience_claims_check CHECK ((((cardinality(audience_claims) >= 1) AND (cardinality(audience_claims) <= 2)) AND (audience_claims <@ '{aud,client_id}'::text[])));
ALTER TABLE public.tenant_issuers ADD CONSTRAINT tenant_issuers_audiences CHECK (((cardinality(audiences) >= 1) OR (preset = 'cognito'::text)));
ALTER TABLE public.tenant_issuers ADD CONSTRAINT tenant_issuers_audiences_check CHECK (habitsync_valid_audiences(audiences));
ALTER TABLE public.tenant_issuers ADD CONSTRAINT tenant_issuers_inline_keys_check CHECK ((octet_length(inline_keys) <= 262144));
ALTER TABLE public.tenant_issuers ADD CONSTRAINT tenant_issuers_issuer_check CHECK ((((char_length(issuer) >= 1) AND (char_length(issuer) <= 512)) AND (issuer ~ '^https?://[^\x01-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$'::text)));
ALTER TABLE public.tenant_issuers ADD CONSTRAINT tenant_issuers_jwks_url_check CHECK (((char_length(jwks_url) <= 2048) AND (jwks_url ~ '^https?://[^\x01-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$'::text)));
ALTER TABLE public.tenant_issuers ADD CONSTRAINT tenant_issuers_key_source CHECK ((((key_source = 'jwks_url'::text) AND (jwks_url IS NOT NULL) AND (inline_keys IS NULL)) OR ((key_source = 'discovery'::text) AND (jwks_url IS NULL) AND (inline_keys IS NULL)) OR ((key_source = 'inline'::text) AND (jwks_url IS NULL) AND (inline_keys IS NOT NULL))));
ALTER TABLE public.tenant_issuers ADD CONSTRAINT tenant_issuers_key_source_check CHECK ((key_source = ANY (ARRAY['jwks_url'::text, 'discovery'::text, 'inline'::text])));
ALTER TABLE public.tenant_issuers ADD CONSTRAINT tenant_issuers_max_lifetime_seconds_check CHECK (((max_lifetime_seconds >= 60) AND (max_lifetime_seconds <= 2592000)));
ALTER TABLE public.tenant_issuers ADD CONSTRAINT tenant_issuers_pkey PRIMARY KEY (tenant_id, issuer);
ALTER TABLE public.tenant_issuers ADD CONSTRAINT tenant_issuers_preset_check CHECK ((preset = ANY (ARRAY['firebase'::text, 'apple'::text, 'auth0'::text, 'supabase'::text, 'cognito'::text])));
ALTER TABLE public.tenant_issuers ADD CONSTRAINT tenant_issuers_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES tenants(id) ON DELETE CASCADE;
ALTER TABLE public.tenant_issuers ADD CONSTRAINT tenant_issuers_user_claim_check CHECK ((user_claim ~ '^[A-Za-z0-9_.:-]{1,64}$'::text));

-- Indexes
CREATE INDEX tenant_issuers_by_issuer ON public.tenant_issuers USING btree (issuer);

-- Policies
CREATE POLICY issuer_routing ON public.tenant_issuers AS PERMISSIVE FOR SELECT TO public
    USING ((issuer = current_setting('habitsync.token_issuer'::text, true)));
CREATE POLICY tenant_isolation ON public.tenant_issuers AS PERMISSIVE FOR ALL TO public
    USING ((tenant_id = habitsync_current_tenant_id()))
    WITH CHECK ((tenant_id = habitsync_current_tenant_id()));

-- Privileges
GRANT SELECT ON public.tenant_issuers TO habitsync_app;
