-- Devices prove they hold what the server holds (docs/protocol.md, "Epochs" and "Digests").
--
-- 1. Epochs. The database has one (sync_epoch), which `habitsync-server epoch rotate` replaces
--    after a backup is restored; each users row has its own (account_epoch), random when the
--    row is made, so an account erased and allowed again starts in a new one. A device sends
--    the epoch it last synced in; one from another timeline is told what to do instead of
--    being answered as if nothing had happened. users.database_epoch is the database's epoch
--    copied into the row (the request reads one row, on Citus on the user's worker), and
--    users.restored_through is the user's counter when the epoch was rotated: what the
--    restored database holds of the user.
-- 2. Digests. users.record_digests keeps, per collection, the number of the user's live
--    records and the XOR of one term per record (habitsync_digest_term), maintained by
--    statement triggers as rows change (also by hand, in psql), so the last page of a pull
--    reports it at the cost of one row whatever the user's history.

CREATE FUNCTION habitsync_new_epoch() RETURNS text
    LANGUAGE sql VOLATILE
    -- 64 of gen_random_uuid()'s random bits (byte 7 holds its version nibble).
    AS $$ SELECT encode(substr(uuid_send(gen_random_uuid()), 9, 8), 'hex') $$;
COMMENT ON FUNCTION habitsync_new_epoch() IS 'A new random epoch: 16 lowercase hexadecimal digits.';

CREATE TABLE sync_epoch (
    singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    epoch      text NOT NULL CHECK (epoch ~ '^[0-9a-f]{16}$'),
    rotated_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE sync_epoch IS 'The database''s sync epoch (one row). habitsync-server epoch rotate replaces it after a backup is restored: devices that synced in another epoch push again what the restored database lacks.';
COMMENT ON COLUMN sync_epoch.singleton IS 'Always true: the table has one row.';
COMMENT ON COLUMN sync_epoch.epoch IS 'The current epoch, 16 lowercase hexadecimal digits.';
COMMENT ON COLUMN sync_epoch.rotated_at IS 'When it was made (migration) or last rotated.';
INSERT INTO sync_epoch (epoch) VALUES (habitsync_new_epoch());

CREATE FUNCTION habitsync_database_epoch() RETURNS text
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_catalog
    AS $$ SELECT epoch FROM sync_epoch $$;
COMMENT ON FUNCTION habitsync_database_epoch() IS 'The database''s current sync epoch (sync_epoch.epoch), for the request role, which cannot read the table.';

-- Existing rows take constants (no volatile default rewrites the table, which Citus would
-- refuse); rows made from now on take a random account epoch and the current database epoch.
ALTER TABLE users
    ADD COLUMN account_epoch text NOT NULL DEFAULT '0000000000000000' CHECK (account_epoch ~ '^[0-9a-f]{16}$'),
    ADD COLUMN database_epoch text NOT NULL DEFAULT '0000000000000000' CHECK (database_epoch ~ '^[0-9a-f]{16}$'),
    ADD COLUMN restored_through bigint NOT NULL DEFAULT 0 CHECK (restored_through >= 0),
    ADD COLUMN record_digests jsonb NOT NULL DEFAULT '{}';
ALTER TABLE users ALTER COLUMN account_epoch SET DEFAULT habitsync_new_epoch();
ALTER TABLE users ALTER COLUMN database_epoch SET DEFAULT habitsync_database_epoch();
COMMENT ON COLUMN users.account_epoch IS 'The account''s sync epoch, random when the row is made: an account erased and allowed again has a new one, and devices of the old account are told to discard it.';
COMMENT ON COLUMN users.database_epoch IS 'sync_epoch.epoch when the row was made or the epoch last rotated.';
COMMENT ON COLUMN users.restored_through IS 'change_counter when the database epoch was last rotated: the versions a restored database holds of the user. Devices push again what they hold above it.';
COMMENT ON COLUMN users.record_digests IS 'Per collection, the user''s live records: {"habits": {"count": n, "xor": x}}, x the XOR of habitsync_digest_term(id, server_version). Kept by triggers; the last page of a pull reports it.';

UPDATE users SET database_epoch = habitsync_database_epoch();

CREATE FUNCTION habitsync_digest_term(p_id uuid, p_version bigint) RETURNS bigint
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT ('x' || substr(md5(p_id::text || ':' || p_version::text), 1, 16))::bit(64)::bigint $$;
COMMENT ON FUNCTION habitsync_digest_term(uuid, bigint) IS 'A live record''s term of its collection''s digest: the first 8 bytes of md5(''<id>:<server_version>''), as a signed 64-bit number.';

-- As the triggers of 0014: the transition table is read on its own, and users is written one
-- user at a time with literals, which routes to the user's shard on Citus. TG_ARGV[0] is the
-- collection's wire name; TG_ARGV[1] 'tombstones' for tables whose deleted rows stay as
-- tombstones (deleted_at), which are not live. (PL/pgSQL plans a branch when it first runs, per
-- table, so the derived tables, which have no deleted_at, never plan the other one.)
CREATE FUNCTION habitsync_record_digest_move(p_collection text, p_tenant uuid, p_user text, p_count bigint, p_xor bigint) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF p_count = 0 AND p_xor = 0 THEN RETURN; END IF;
    EXECUTE format($sql$UPDATE users SET record_digests = jsonb_set(record_digests, '{%1$s}', jsonb_build_object(
                'count', coalesce((record_digests #>> '{%1$s,count}')::bigint, 0) + %2$s,
                'xor', coalesce((record_digests #>> '{%1$s,xor}')::bigint, 0) # %3$s))
            WHERE tenant_id = %4$L AND user_id = %5$L$sql$, p_collection, p_count, p_xor, p_tenant, p_user);
END
$$;
COMMENT ON FUNCTION habitsync_record_digest_move(text, uuid, text, bigint, bigint) IS 'Adds to a user''s digest of a collection (users.record_digests): count by p_count, terms by XOR.';

CREATE FUNCTION habitsync_record_digest_after_insert_or_delete() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    touched record;
    sign integer := CASE TG_OP WHEN 'DELETE' THEN -1 ELSE 1 END;
BEGIN
    IF TG_ARGV[1] = 'tombstones' THEN
        FOR touched IN SELECT tenant_id, user_id, count(*) AS n, bit_xor(habitsync_digest_term(id, server_version)) AS x
                       FROM changed WHERE deleted_at IS NULL GROUP BY tenant_id, user_id LOOP
            PERFORM habitsync_record_digest_move(TG_ARGV[0], touched.tenant_id, touched.user_id, sign * touched.n, touched.x);
        END LOOP;
    ELSE
        FOR touched IN SELECT tenant_id, user_id, count(*) AS n, bit_xor(habitsync_digest_term(id, server_version)) AS x
                       FROM changed GROUP BY tenant_id, user_id LOOP
            PERFORM habitsync_record_digest_move(TG_ARGV[0], touched.tenant_id, touched.user_id, sign * touched.n, touched.x);
        END LOOP;
    END IF;
    RETURN NULL;
END
$$;

COMMENT ON FUNCTION habitsync_record_digest_after_insert_or_delete() IS 'Statement trigger (NEW or OLD TABLE changed): moves users.record_digests by the live rows inserted or deleted. Arguments: collection, ''tombstones'' or ''live''.';

CREATE FUNCTION habitsync_record_digest_after_update() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    touched record;
BEGIN
    IF TG_ARGV[1] = 'tombstones' THEN
        FOR touched IN
            SELECT tenant_id, user_id, sum(n) AS n, bit_xor(x) AS x FROM (
                SELECT tenant_id, user_id, 1 AS n, habitsync_digest_term(id, server_version) AS x FROM updated_new WHERE deleted_at IS NULL
                UNION ALL
                SELECT tenant_id, user_id, -1, habitsync_digest_term(id, server_version) FROM updated_old WHERE deleted_at IS NULL) d
            GROUP BY tenant_id, user_id
        LOOP
            PERFORM habitsync_record_digest_move(TG_ARGV[0], touched.tenant_id, touched.user_id, touched.n, touched.x);
        END LOOP;
    ELSE
        FOR touched IN
            SELECT tenant_id, user_id, sum(n) AS n, bit_xor(x) AS x FROM (
                SELECT tenant_id, user_id, 1 AS n, habitsync_digest_term(id, server_version) AS x FROM updated_new
                UNION ALL
                SELECT tenant_id, user_id, -1, habitsync_digest_term(id, server_version) FROM updated_old) d
            GROUP BY tenant_id, user_id
        LOOP
            PERFORM habitsync_record_digest_move(TG_ARGV[0], touched.tenant_id, touched.user_id, touched.n, touched.x);
        END LOOP;
    END IF;
    RETURN NULL;
END
$$;

COMMENT ON FUNCTION habitsync_record_digest_after_update() IS 'Statement trigger (OLD TABLE updated_old, NEW TABLE updated_new): moves users.record_digests from the live rows before to those after. Arguments: collection, ''tombstones'' or ''live''.';

-- Every collection but usageEvents: events are append-only and leave the table by month
-- (maintenance archives a month by detaching its partition, which runs no trigger).
DO $$
DECLARE
    target record;
BEGIN
    PERFORM set_config('citus.enable_unsafe_triggers', 'on', true);
    ALTER TABLE users NO FORCE ROW LEVEL SECURITY;
    FOR target IN SELECT * FROM (VALUES
        ('habits', 'habits', 'tombstones'), ('reminders', 'reminders', 'tombstones'),
        ('daily_progress', 'dailyProgress', 'tombstones'), ('xp_transactions', 'xpTransactions', 'tombstones'),
        ('achievements', 'achievements', 'tombstones'), ('focus_sessions', 'focusSessions', 'tombstones'),
        ('selected_apps', 'selectedApps', 'tombstones'), ('user_settings', 'userSettings', 'tombstones'),
        ('global_streaks', 'globalStreak', 'live'), ('user_progress', 'userProgress', 'live'),
        ('usage_streaks', 'usageStreak', 'live')) t (tbl, collection, kind)
    LOOP
        EXECUTE format('CREATE TRIGGER record_digest_after_insert AFTER INSERT ON %I REFERENCING NEW TABLE AS changed '
                       'FOR EACH STATEMENT EXECUTE FUNCTION habitsync_record_digest_after_insert_or_delete(%L, %L)',
                       target.tbl, target.collection, target.kind);
        EXECUTE format('CREATE TRIGGER record_digest_after_update AFTER UPDATE ON %I REFERENCING OLD TABLE AS updated_old NEW TABLE AS updated_new '
                       'FOR EACH STATEMENT EXECUTE FUNCTION habitsync_record_digest_after_update(%L, %L)',
                       target.tbl, target.collection, target.kind);
        EXECUTE format('CREATE TRIGGER record_digest_after_delete AFTER DELETE ON %I REFERENCING OLD TABLE AS changed '
                       'FOR EACH STATEMENT EXECUTE FUNCTION habitsync_record_digest_after_insert_or_delete(%L, %L)',
                       target.tbl, target.collection, target.kind);
        -- The digests of the rows already there, one statement per table.
        EXECUTE format($sql$ALTER TABLE %1$I NO FORCE ROW LEVEL SECURITY;
            UPDATE users u SET record_digests = jsonb_set(u.record_digests, '{%2$s}', jsonb_build_object('count', d.n, 'xor', d.x))
            FROM (SELECT tenant_id, user_id, count(*) AS n, bit_xor(habitsync_digest_term(id, server_version)) AS x
                  FROM %1$I %3$s GROUP BY tenant_id, user_id) d
            WHERE u.tenant_id = d.tenant_id AND u.user_id = d.user_id;
            ALTER TABLE %1$I FORCE ROW LEVEL SECURITY$sql$,
            target.tbl, target.collection, CASE target.kind WHEN 'tombstones' THEN 'WHERE deleted_at IS NULL' ELSE '' END);
    END LOOP;
    ALTER TABLE users FORCE ROW LEVEL SECURITY;
END
$$;
