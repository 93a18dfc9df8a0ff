-- public.sync_epoch
-- The database's sync epoch (one row). habitsync-server epoch rotate replaces it after a backup is restored: devices that synced in another epoch push again what the restored database lacks.

CREATE TABLE public.sync_epoch (
    -- Always true: the table has one row.
    singleton boolean DEFAULT true NOT NULL,
    -- The current epoch, 16 lowercase hexadecimal digits.
    epoch text NOT NULL,
    -- When it was made (migration) or last rotated.
    rotated_at timestamp with time zone DEFAULT now() NOT NULL
);

-- Constraints
ALTER TABLE public.sync_epoch ADD CONSTRAINT sync_epoch_epoch_check CHECK ((epoch ~ '^[0-9a-f]{16}$'::text));
ALTER TABLE public.sync_epoch ADD CONSTRAINT sync_epoch_pkey PRIMARY KEY (singleton);
ALTER TABLE public.sync_epoch ADD CONSTRAINT sync_epoch_singleton_check CHECK (singleton);

-- Privileges
GRANT SELECT ON public.sync_epoch TO habitsync_analyst;
GRANT SELECT ON public.sync_epoch TO habitsync_app;
