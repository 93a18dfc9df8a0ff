-- Issue 44: nothing erased comes back, also through a device that sends no epoch.
--
-- An account erased and allowed again is known as such. `user allow-again` now makes the
-- account's row at once, with a new account epoch and account_restarted = true, and refuses
-- while an erasure has not finished (the row is still there). A push into a restarted
-- account that carries no epoch (an app from before epochs, or one that never synced) is
-- answered account_restarted instead of bringing the erased records back. Accounts allowed
-- again before this migration are not known (the erasure keeps no user id) and stay false.
ALTER TABLE users ADD COLUMN account_restarted boolean NOT NULL DEFAULT false;
COMMENT ON COLUMN users.account_restarted IS 'The account was erased and allowed again (user allow-again, from migration 0033 on): a push that carries no epoch is answered account_restarted.';

CREATE OR REPLACE FUNCTION habitsync_allow_user_again(p_tenant uuid, p_user text) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_catalog
    AS $$
    DECLARE
        marker bytea := habitsync_erased_user_hash(p_tenant, p_user);
        removed bigint;
    BEGIN
        IF EXISTS (SELECT 1 FROM erased_users WHERE tenant_id = p_tenant AND user_hash = marker)
           AND EXISTS (SELECT 1 FROM users WHERE tenant_id = p_tenant AND user_id = p_user) THEN
            RAISE EXCEPTION 'the erasure of this user has not finished; run user erase again, then allow-again'
                USING ERRCODE = 'object_not_in_prerequisite_state';
        END IF;
        DELETE FROM erased_users WHERE tenant_id = p_tenant AND user_hash = marker;
        GET DIAGNOSTICS removed = ROW_COUNT;
        IF removed > 0 THEN
            INSERT INTO users (tenant_id, user_id, account_restarted) VALUES (p_tenant, p_user, true);
        END IF;
        RETURN removed > 0;
    END
    $$;
COMMENT ON FUNCTION habitsync_allow_user_again(uuid, text) IS 'Removes an erasure marker (admins only: user allow-again) and makes the account''s row, restarted, in a new account epoch; true when there was a marker. Refuses while the erasure has not finished.';
REVOKE ALL ON FUNCTION habitsync_allow_user_again(uuid, text) FROM PUBLIC;

