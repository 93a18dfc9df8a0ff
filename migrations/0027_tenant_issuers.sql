-- Tenants verify their identity provider's own tokens (docs/identity.md).
--
-- tenant_issuers: per tenant, the issuers whose tokens it accepts. A token without a tid
-- claim is routed by its iss (and aud, when one issuer serves several tenants) to the one
-- tenant whose configuration names them; the keys come from the issuer's JWKS URL, its OIDC
-- discovery document, or a key set stored here (inline_keys). Nothing here is secret: the key
-- material is public keys only.
--
-- Requests read it before they know the tenant: the issuer_routing policy shows the request
-- role the rows of the one issuer it names (SET LOCAL habitsync.token_issuer), never a list.
-- Two tenants may share an issuer only with audiences that do not overlap; tenant add-issuer
-- checks that under a lock (an exclusion constraint cannot compare text arrays).

CREATE FUNCTION habitsync_valid_audiences(p_audiences text[]) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN cardinality(p_audiences) <= 20
        AND array_position(p_audiences, NULL) IS NULL
        AND coalesce((SELECT bool_and(char_length(a) BETWEEN 1 AND 512 AND a !~ '[\x01-\x1f\x7f-\x9f]')
                      FROM unnest(p_audiences) a), true);
COMMENT ON FUNCTION habitsync_valid_audiences(text[]) IS 'tenant_issuers.audiences: at most 20, each 1-512 characters with no control character.';

CREATE TABLE tenant_issuers (
    tenant_id            uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    issuer               text NOT NULL CHECK (char_length(issuer) BETWEEN 1 AND 512 AND issuer ~ '^https?://[^\x01-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$'),
    key_source           text NOT NULL CHECK (key_source IN ('jwks_url', 'discovery', 'inline')),
    jwks_url             text CHECK (char_length(jwks_url) <= 2048 AND jwks_url ~ '^https?://[^\x01-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$'),
    inline_keys          text CHECK (octet_length(inline_keys) <= 262144),
    audiences            text[] NOT NULL CHECK (habitsync_valid_audiences(audiences)),
    audience_claims      text[] NOT NULL DEFAULT '{aud}' CHECK (cardinality(audience_claims) BETWEEN 1 AND 2 AND audience_claims <@ '{aud,client_id}'),
    algorithms           text[] NOT NULL DEFAULT '{RS256,ES256}' CHECK (cardinality(algorithms) BETWEEN 1 AND 3 AND algorithms <@ '{RS256,ES256,EdDSA}'),
    user_claim           text NOT NULL DEFAULT 'sub' CHECK (user_claim ~ '^[A-Za-z0-9_.:-]{1,64}$'),
    max_lifetime_seconds integer NOT NULL DEFAULT 86400 CHECK (max_lifetime_seconds BETWEEN 60 AND 2592000),
    preset               text CHECK (preset IN ('firebase', 'apple', 'auth0', 'supabase', 'cognito')),
    created_at           timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, issuer),
    CONSTRAINT tenant_issuers_key_source CHECK (
        (key_source = 'jwks_url' AND jwks_url IS NOT NULL AND inline_keys IS NULL)
        OR (key_source = 'discovery' AND jwks_url IS NULL AND inline_keys IS NULL)
        OR (key_source = 'inline' AND jwks_url IS NULL AND inline_keys IS NOT NULL)
    ),
    -- Any audience (an empty list) only for Cognito, whose user pool is the issuer itself.
    CONSTRAINT tenant_issuers_audiences CHECK (cardinality(audiences) >= 1 OR preset = 'cognito')
);
CREATE INDEX tenant_issuers_by_issuer ON tenant_issuers (issuer);
COMMENT ON TABLE tenant_issuers IS 'Identity providers whose tokens a tenant accepts (tenant add-issuer). Public configuration only: no secret.';
COMMENT ON COLUMN tenant_issuers.tenant_id IS 'The tenant whose users the tokens name.';
COMMENT ON COLUMN tenant_issuers.issuer IS 'The iss claim, exactly (Auth0''s ends with /).';
COMMENT ON COLUMN tenant_issuers.key_source IS 'jwks_url (fetched), discovery (jwks_uri of <issuer>/.well-known/openid-configuration), inline (inline_keys).';
COMMENT ON COLUMN tenant_issuers.jwks_url IS 'For key_source jwks_url: where the issuer publishes its key set.';
COMMENT ON COLUMN tenant_issuers.inline_keys IS 'For key_source inline: a JWKS document or a PEM public key.';
COMMENT ON COLUMN tenant_issuers.audiences IS 'Accepted audiences; a token must name one. Empty (Cognito only): any app client of the user pool.';
COMMENT ON COLUMN tenant_issuers.audience_claims IS 'Claims read as the audience: aud, and client_id for Cognito access tokens (which carry no aud).';
COMMENT ON COLUMN tenant_issuers.algorithms IS 'Accepted signature algorithms: RS256, ES256, EdDSA. Never none, never a symmetric one.';
COMMENT ON COLUMN tenant_issuers.user_claim IS 'The claim naming the user (users.user_id); sub by default.';
COMMENT ON COLUMN tenant_issuers.max_lifetime_seconds IS 'Longest accepted token lifetime, exp - iat (exp - now without iat).';
COMMENT ON COLUMN tenant_issuers.preset IS 'The preset it was made from, if any.';
COMMENT ON COLUMN tenant_issuers.created_at IS 'When it was added.';

ALTER TABLE tenant_issuers ENABLE ROW LEVEL SECURITY;
ALTER TABLE tenant_issuers FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON tenant_issuers USING (tenant_id = habitsync_current_tenant_id()) WITH CHECK (tenant_id = habitsync_current_tenant_id());
-- Before the tenant is known: the rows of the issuer the token names, and only those.
CREATE POLICY issuer_routing ON tenant_issuers FOR SELECT USING (issuer = current_setting('habitsync.token_issuer', true));
GRANT SELECT ON tenant_issuers TO habitsync_app;

-- The reference tables of a Citus cluster, in one place: habitsync_distribute reads this
-- list, so a new one is added here alone. tenant_issuers is read on every node as tenants.
CREATE FUNCTION habitsync_reference_tables() RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN '{tenants,tenant_keys,tenant_issuers,erasure_keys,erased_users,sync_epoch}'::text[];
COMMENT ON FUNCTION habitsync_reference_tables() IS 'Tables that are reference tables on Citus (copied to every node): tenants and their keys, issuers, erasure keys and markers, sync_epoch.';

DO $$
BEGIN
    -- Nested: PL/pgSQL plans the inner test (pg_dist_partition) only where Citus is.
    IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
        IF EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = 'users'::regclass) THEN
            PERFORM create_reference_table('tenant_issuers');
        END IF;
    END IF;
END
$$;

-- The body of habitsync_distribute (0026) reading habitsync_reference_tables() instead of
-- its own two copies of the list; nothing else changes.
CREATE OR REPLACE FUNCTION habitsync_distribute(p_shard_count integer DEFAULT NULL)
    RETURNS TABLE (relation text, became text)
    LANGUAGE plpgsql
    SET search_path = public, pg_catalog
    AS $$
DECLARE
    fk record;
    saved_keys text[] := '{}';
    target record;
    fn record;
    trg record;
    saved_triggers text[] := '{}';
    distributed_now regclass[] := '{}';
    before_counts jsonb := '{}';
    n bigint;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
        RAISE EXCEPTION 'the citus extension is not installed in this database'
            USING ERRCODE = 'feature_not_supported', HINT = 'CREATE EXTENSION citus on the coordinator and every worker, and add the workers (citus_add_node), first.';
    END IF;
    -- Not only when users exist: a role that row-level security filters would see none.
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = current_user AND (rolsuper OR rolbypassrls)) THEN
        RAISE EXCEPTION 'distribute needs a superuser: row-level security would hide rows from the copy into the shards'
            USING ERRCODE = 'insufficient_privilege', HINT = 'Run habitsync-server distribute with a superuser''s DATABASE_URL.';
    END IF;
    PERFORM set_config('citus.multi_shard_modify_mode', 'sequential', true);
    PERFORM set_config('citus.enable_unsafe_triggers', 'on', true);
    IF p_shard_count IS NOT NULL THEN
        PERFORM set_config('citus.shard_count', p_shard_count::text, true);
    END IF;

    -- 1. Foreign keys whose either end is not yet a Citus table.
    FOR fk IN
        SELECT c.conname, c.conrelid::regclass AS tbl, pg_get_constraintdef(c.oid) AS definition
        FROM pg_constraint c
        WHERE c.contype = 'f'
          AND NOT EXISTS (SELECT 1 FROM pg_class p WHERE p.oid = c.conrelid AND p.relispartition)
          AND (NOT EXISTS (SELECT 1 FROM pg_dist_partition d WHERE d.logicalrelid = c.conrelid)
               OR NOT EXISTS (SELECT 1 FROM pg_dist_partition d WHERE d.logicalrelid = c.confrelid))
        ORDER BY 2::text, 1
    LOOP
        saved_keys := saved_keys || format('ALTER TABLE %s ADD CONSTRAINT %I %s', fk.tbl, fk.conname, fk.definition);
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', fk.tbl, fk.conname);
    END LOOP;

    -- 1b. Triggers of the tables about to be distributed (a partitioned table's, which its
    -- partitions inherit, once), and the rows of each.
    FOR trg IN
        SELECT t.tgname, t.tgrelid::regclass AS tbl, pg_get_triggerdef(t.oid) AS definition
        FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE NOT t.tgisinternal AND t.tgparentid = 0 AND n.nspname IN ('public', 'archive')
          AND NOT EXISTS (SELECT 1 FROM pg_dist_partition d WHERE d.logicalrelid = t.tgrelid)
        ORDER BY 2::text, 1
    LOOP
        saved_triggers := saved_triggers || trg.definition;
        EXECUTE format('DROP TRIGGER %I ON %s', trg.tgname, trg.tbl);
    END LOOP;
    FOR target IN
        SELECT c.oid::regclass AS tbl FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname IN ('public', 'archive') AND c.relkind IN ('r', 'p') AND NOT c.relispartition
          AND (c.relname = ANY (habitsync_reference_tables())
               OR c.oid IN (SELECT CASE WHEN p.relispartition THEN pg_partition_root(p.oid) ELSE p.oid END
                            FROM habitsync_user_tables() u JOIN pg_class p ON p.oid = u.relation))
          AND NOT EXISTS (SELECT 1 FROM pg_dist_partition d WHERE d.logicalrelid = c.oid)
    LOOP
        EXECUTE format('SELECT count(*) FROM %s', target.tbl) INTO n;
        before_counts := before_counts || jsonb_build_object(target.tbl::text, n);
    END LOOP;

    -- 2. Reference tables (habitsync_reference_tables()).
    FOR target IN
        SELECT c.oid::regclass AS tbl FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
          AND c.relname = ANY (habitsync_reference_tables())
          AND NOT EXISTS (SELECT 1 FROM pg_dist_partition d WHERE d.logicalrelid = c.oid)
        ORDER BY c.relname <> 'tenants', c.relname
    LOOP
        PERFORM create_reference_table(target.tbl);
        distributed_now := distributed_now || target.tbl;
        relation := target.tbl::text; became := 'reference'; RETURN NEXT;
    END LOOP;

    -- 3. users by user_id, then every per-user table with it.
    IF NOT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = 'users'::regclass) THEN
        PERFORM create_distributed_table('users', 'user_id');
        distributed_now := distributed_now || 'users'::regclass;
        relation := 'users'; became := 'distributed by user_id'; RETURN NEXT;
    END IF;
    FOR target IN
        SELECT DISTINCT t.tbl FROM (
            SELECT (CASE WHEN c.relispartition THEN pg_partition_root(c.oid) ELSE c.oid END)::regclass AS tbl
            FROM habitsync_user_tables() u JOIN pg_class c ON c.oid = u.relation) t
        WHERE t.tbl <> 'users'::regclass
          AND NOT EXISTS (SELECT 1 FROM pg_dist_partition d WHERE d.logicalrelid = t.tbl)
        ORDER BY 1
    LOOP
        PERFORM create_distributed_table(target.tbl, 'user_id', colocate_with => 'users');
        distributed_now := distributed_now || target.tbl;
        relation := target.tbl::text; became := 'distributed by user_id, with users'; RETURN NEXT;
    END LOOP;

    -- 4. Functions, and the request role's login.
    FOR fn IN
        SELECT p.oid::regprocedure AS signature FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = 'public' AND p.proname LIKE 'habitsync\_%' AND p.prokind = 'f'
          AND p.proname <> 'habitsync_distribute'
          AND NOT EXISTS (SELECT 1 FROM pg_dist_object o WHERE o.classid = 'pg_proc'::regclass AND o.objid = p.oid)
        ORDER BY 1::text
    LOOP
        PERFORM create_distributed_function(fn.signature);
        relation := fn.signature::text; became := 'function on every node'; RETURN NEXT;
    END LOOP;
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'habitsync_app' AND NOT rolcanlogin) THEN
        ALTER ROLE habitsync_app LOGIN;
        relation := 'habitsync_app'; became := 'role that may log in (Citus connects to workers as it)'; RETURN NEXT;
    END IF;

    -- 5. Every row once: counted through Citus now, as before. Then the coordinator's local
    -- copies go.
    FOR i IN 1 .. coalesce(array_length(distributed_now, 1), 0) LOOP
        EXECUTE format('SELECT count(*) FROM %s', distributed_now[i]) INTO n;
        IF n IS DISTINCT FROM (before_counts ->> distributed_now[i]::text)::bigint THEN
            RAISE EXCEPTION 'distribution of % would change its rows from % to %; nothing was distributed',
                distributed_now[i], before_counts ->> distributed_now[i]::text, n USING ERRCODE = 'data_exception';
        END IF;
        PERFORM truncate_local_data_after_distributing_table(distributed_now[i]);
    END LOOP;

    -- 6. The triggers again (on the shards too: Citus creates them there), then the foreign keys.
    FOR i IN 1 .. coalesce(array_length(saved_triggers, 1), 0) LOOP
        EXECUTE saved_triggers[i];
    END LOOP;
    FOR i IN 1 .. coalesce(array_length(saved_keys, 1), 0) LOOP
        EXECUTE saved_keys[i];
    END LOOP;
END
$$;
COMMENT ON FUNCTION habitsync_distribute(integer) IS 'Distributes the schema and its rows over a Citus cluster (reference tables, per-user tables by user_id co-located with users, functions on every node); every row once or nothing; idempotent. habitsync-server distribute runs it.';
REVOKE ALL ON FUNCTION habitsync_distribute(integer) FROM PUBLIC;
