-- public.habitsync_valid_weekdays(days text[])
-- A specificWeekdays schedule: 1 to 7 distinct names from sunday to saturday.

CREATE OR REPLACE FUNCTION public.habitsync_valid_weekdays(days text[])
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$
        SELECT cardinality(days) BETWEEN 1 AND 7
           AND days <@ ARRAY['sunday','monday','tuesday','wednesday','thursday','friday','saturday']
           AND array_position(days, NULL) IS NULL
           AND (SELECT count(DISTINCT d) FROM unnest(days) AS d) = cardinality(days)
    $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
