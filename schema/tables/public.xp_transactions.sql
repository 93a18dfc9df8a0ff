-- public.xp_transactions
-- xpTransactions collection (XPTransactionModel): the append-only XP ledger, the only source of totalXP. A reversal is a new negative row.

CREATE TABLE public.xp_transactions (
    -- Owning tenant.
    tenant_id uuid NOT NULL,
    -- Owning user.
    user_id text NOT NULL,
    -- Record id.
    id uuid NOT NULL,
    -- XP added (positive) or removed (negative); non-zero, |amount| ≤ 100000.
    amount integer,
    -- Why (1–200 characters); the server's daily awards use daily_completion / daily_completion_reversed.
    reason text,
    -- Wire timestamp: when the transaction happened.
    occurred_at timestamp(3) with time zone,
    -- The calendar day an award is for (always set on daily completion awards).
    date date,
    -- LWW key, part 1 (the first write's; the ledger is append-only).
    updated_at timestamp(3) with time zone NOT NULL,
    -- Device id, or 'server' for daily completion awards.
    updated_by text NOT NULL,
    -- Per-user change number of the write.
    server_version bigint NOT NULL,
    -- Server time the write was accepted.
    synced_at timestamp with time zone DEFAULT now() NOT NULL,
    -- Always NULL: ledger rows are never deleted (kept for the uniform sync fields).
    deleted_at timestamp with time zone
);
ALTER TABLE public.xp_transactions ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.xp_transactions FORCE ROW LEVEL SECURITY;

-- Constraints
ALTER TABLE public.xp_transactions ADD CONSTRAINT xp_transactions_amount_check CHECK (((amount <> 0) AND (abs(amount) <= 100000)));
ALTER TABLE public.xp_transactions ADD CONSTRAINT xp_transactions_live_fields CHECK (((deleted_at IS NOT NULL) OR ((amount IS NOT NULL) AND (reason IS NOT NULL) AND (occurred_at IS NOT NULL))));
ALTER TABLE public.xp_transactions ADD CONSTRAINT xp_transactions_pkey PRIMARY KEY (tenant_id, user_id, id);
ALTER TABLE public.xp_transactions ADD CONSTRAINT xp_transactions_reason_check CHECK (((char_length(reason) >= 1) AND (char_length(reason) <= 200)));
ALTER TABLE public.xp_transactions ADD CONSTRAINT xp_transactions_server_version_check CHECK ((server_version > 0));
ALTER TABLE public.xp_transactions ADD CONSTRAINT xp_transactions_updated_by_check CHECK (((char_length(updated_by) >= 1) AND (char_length(updated_by) <= 100)));

-- Indexes
CREATE INDEX xp_transactions_by_date ON public.xp_transactions USING btree (tenant_id, user_id, date) WHERE (date IS NOT NULL);
CREATE INDEX xp_transactions_by_time ON public.xp_transactions USING btree (tenant_id, user_id, occurred_at) WHERE ((server_version >= 0) IS TRUE);
CREATE UNIQUE INDEX xp_transactions_pull ON public.xp_transactions USING btree (tenant_id, user_id, server_version);

-- Triggers
CREATE TRIGGER record_digest_after_delete AFTER DELETE ON public.xp_transactions REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION habitsync_record_digest_after_insert_or_delete('xpTransactions', 'tombstones');
CREATE TRIGGER record_digest_after_insert AFTER INSERT ON public.xp_transactions REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION habitsync_record_digest_after_insert_or_delete('xpTransactions', 'tombstones');
CREATE TRIGGER record_digest_after_update AFTER UPDATE ON public.xp_transactions REFERENCING OLD TABLE AS updated_old NEW TABLE AS updated_new FOR EACH STATEMENT EXECUTE FUNCTION habitsync_record_digest_after_update('xpTransactions', 'tombstones');
CREATE TRIGGER xp_ledger_sum_after_delete AFTER DELETE ON public.xp_transactions REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION habitsync_xp_ledger_sum_after_insert_or_delete();
CREATE TRIGGER xp_ledger_sum_after_insert AFTER INSERT ON public.xp_transactions REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION habitsync_xp_ledger_sum_after_insert_or_delete();
CREATE TRIGGER xp_ledger_sum_after_update AFTER UPDATE ON public.xp_transactions REFERENCING OLD TABLE AS updated_old NEW TABLE AS updated_new FOR EACH STATEMENT EXECUTE FUNCTION habitsync_xp_ledger_sum_after_update();

-- Policies
CREATE POLICY analyst_read ON public.xp_transactions AS PERMISSIVE FOR SELECT TO habitsync_analyst
    USING (true);
CREATE POLICY tenant_isolation ON public.xp_transactions AS PERMISSIVE FOR ALL TO public
    USING (habitsync_row_visible(tenant_id, user_id))
    WITH CHECK (habitsync_row_visible(tenant_id, user_id));

-- Privileges
GRANT SELECT ON public.xp_transactions TO habitsync_analyst;
GRANT DELETE, INSERT, SELECT, UPDATE ON public.xp_transactions TO habitsync_app;
