-- public.habitsync_user_tables()
-- Every table holding per-user rows (tenant_id uuid and user_id text), from the catalog; referenced = another table's foreign key points at it.

CREATE OR REPLACE FUNCTION public.habitsync_user_tables()
 RETURNS TABLE(relation regclass, label text, referenced boolean)
 LANGUAGE sql
 STABLE
 SET search_path TO 'public', 'pg_catalog'
AS $function$
        SELECT c.oid::regclass,
               -- public partitions count under their partitioned table; archived ones by name.
               CASE WHEN c.relispartition THEN pg_partition_root(c.oid)::regclass::text ELSE c.oid::regclass::text END,
               EXISTS (SELECT 1 FROM pg_constraint f WHERE f.contype = 'f' AND f.confrelid = c.oid AND f.conrelid <> c.oid)
        FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind = 'r'
          AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\_%'
          AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenant_id' AND a.atttypid = 'uuid'::regtype AND NOT a.attisdropped)
          AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'user_id' AND a.atttypid = 'text'::regtype AND NOT a.attisdropped)
    $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
