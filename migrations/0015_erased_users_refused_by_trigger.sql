-- An erased account is refused by a trigger on users instead of inside the statement that
-- creates and locks the user's row (PushStore.lockUser), which becomes a plain
-- `INSERT … VALUES … ON CONFLICT DO UPDATE … RETURNING <columns>`.
--
-- Same checks, same single round trip: BEFORE INSERT runs before the row exists (a known
-- erasure creates no row and takes no lock), and BEFORE UPDATE OF last_seen_at runs once the
-- conflicting row's lock is granted, reading with a fresh snapshot (habitsync_user_erased is
-- VOLATILE), so a push that waited behind an erasure sees its marker. The reason is Citus
-- (deploy/README.md, "Citus"): it refuses non-immutable functions in RETURNING, and plans an
-- INSERT … SELECT by pulling the rows to the coordinator, where the statement's parameters
-- lose their types; an INSERT … VALUES routes to the user's shard, where the trigger runs.
--
-- SQLSTATE HS410 is this project's own code for "account erased" (the store maps it to 410).
CREATE FUNCTION habitsync_refuse_erased_user() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = public, pg_catalog
    AS $$
BEGIN
    IF habitsync_user_erased(NEW.tenant_id, NEW.user_id) THEN
        RAISE EXCEPTION 'the account was erased' USING ERRCODE = 'HS410';
    END IF;
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION habitsync_refuse_erased_user() IS 'Refuses (SQLSTATE HS410) to create, or to mark as seen, the users row of an erased account: no push, pull or import comes back to it.';

CREATE TRIGGER refuse_erased_user BEFORE INSERT OR UPDATE OF last_seen_at ON users
    FOR EACH ROW EXECUTE FUNCTION habitsync_refuse_erased_user();
