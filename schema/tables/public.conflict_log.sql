-- public.conflict_log
-- Every pushed change that did not win: superseded by a newer write, or rejected as invalid. Nothing is lost silently.

CREATE TABLE public.conflict_log (
    -- Owning tenant.
    tenant_id uuid NOT NULL,
    -- Owning user.
    user_id text NOT NULL,
    -- Log entry number.
    id bigint GENERATED ALWAYS AS IDENTITY NOT NULL,
    -- Wire collection name as sent (may be unknown for rejected changes).
    collection text NOT NULL,
    -- Record id as sent.
    record_id text,
    -- superseded (a newer write won) or rejected (invalid).
    outcome text NOT NULL,
    -- Machine-readable rejection code (invalid_field, unknown_reference, …).
    error_code text,
    -- Field the rejection is about, if any.
    error_field text,
    -- Human-readable rejection message.
    error_message text,
    -- upsert or delete, as sent.
    op text,
    -- The losing change as sent.
    incoming_payload jsonb,
    -- LWW key of the losing change, part 1.
    incoming_updated_at timestamp(3) with time zone,
    -- LWW key of the losing change, part 2 (its device).
    incoming_updated_by text,
    -- LWW key of the stored winner, part 1 (superseded only).
    winning_updated_at timestamp(3) with time zone,
    -- LWW key of the stored winner, part 2.
    winning_updated_by text,
    -- Device that pushed the losing change.
    device_id text,
    -- Batch it came in.
    batch_id uuid,
    -- When it was logged.
    logged_at timestamp with time zone DEFAULT now() NOT NULL,
    -- For a field write that lost on arrival to a later write of the field (records that merge field by field): the field. incoming_payload is then {field: value}, incoming_updated_at/_by the key of the write that lost and winning_updated_at/_by that of the write that beat it. A stored value a later write replaces is an edit and is not logged, nor is a write that lost to the same value. NULL: the whole change (rejected, or beaten by a delete, or of a collection not merged by field).
    field text
);
ALTER TABLE public.conflict_log ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.conflict_log FORCE ROW LEVEL SECURITY;

-- Constraints
ALTER TABLE public.conflict_log ADD CONSTRAINT conflict_log_collection_check CHECK (((char_length(collection) >= 1) AND (char_length(collection) <= 100)));
ALTER TABLE public.conflict_log ADD CONSTRAINT conflict_log_error_code_check CHECK ((char_length(error_code) <= 100));
ALTER TABLE public.conflict_log ADD CONSTRAINT conflict_log_error_field_check CHECK ((char_length(error_field) <= 200));
ALTER TABLE public.conflict_log ADD CONSTRAINT conflict_log_error_message_check CHECK ((char_length(error_message) <= 2000));
ALTER TABLE public.conflict_log ADD CONSTRAINT conflict_log_field_check CHECK (((char_length(field) >= 1) AND (char_length(field) <= 100)));
ALTER TABLE public.conflict_log ADD CONSTRAINT conflict_log_op_check CHECK ((op = ANY (ARRAY['upsert'::text, 'delete'::text])));
ALTER TABLE public.conflict_log ADD CONSTRAINT conflict_log_outcome_check CHECK ((outcome = ANY (ARRAY['superseded'::text, 'rejected'::text])));
ALTER TABLE public.conflict_log ADD CONSTRAINT conflict_log_pkey PRIMARY KEY (tenant_id, user_id, id);
ALTER TABLE public.conflict_log ADD CONSTRAINT conflict_log_record_id_check CHECK ((char_length(record_id) <= 200));
ALTER TABLE public.conflict_log ADD CONSTRAINT conflict_log_rejection_code CHECK (((outcome <> 'rejected'::text) OR (error_code IS NOT NULL)));
ALTER TABLE public.conflict_log ADD CONSTRAINT conflict_log_tenant_id_user_id_fkey FOREIGN KEY (tenant_id, user_id) REFERENCES users(tenant_id, user_id) ON DELETE CASCADE;

-- Indexes
CREATE INDEX conflict_log_by_day ON public.conflict_log USING btree (tenant_id, logged_at, collection);

-- Policies
CREATE POLICY analyst_read ON public.conflict_log AS PERMISSIVE FOR SELECT TO habitsync_analyst
    USING (true);
CREATE POLICY tenant_isolation ON public.conflict_log AS PERMISSIVE FOR ALL TO public
    USING (habitsync_row_visible(tenant_id, user_id))
    WITH CHECK (habitsync_row_visible(tenant_id, user_id));

-- Privileges
GRANT SELECT ON public.conflict_log TO habitsync_analyst;
GRANT DELETE, INSERT, SELECT, UPDATE ON public.conflict_log TO habitsync_app;
