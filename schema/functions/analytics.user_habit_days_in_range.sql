-- analytics.user_habit_days_in_range(p_tenant uuid, p_user text, from_date date, to_date date)
-- How many (habit, day) rows the user's statistics over from_date…to_date compute: live habits times the days of the range each was alive. The stats API refuses a range above its limit.

CREATE OR REPLACE FUNCTION analytics.user_habit_days_in_range(p_tenant uuid, p_user text, from_date date, to_date date)
 RETURNS bigint
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
    total bigint;
BEGIN
    EXECUTE format($query$
        SELECT coalesce(sum(greatest(0, least(h.end_date, $2, (now() AT TIME ZONE u.time_zone)::date)
                                        - greatest(h.start_date, $1, (now() AT TIME ZONE u.time_zone)::date - 3660) + 1)), 0)::int8
        FROM habits h JOIN users u ON u.tenant_id = h.tenant_id AND u.user_id = h.user_id
        WHERE h.deleted_at IS NULL AND h.tenant_id = %1$L AND h.user_id = %2$L AND u.tenant_id = %1$L AND u.user_id = %2$L
        $query$, p_tenant, p_user)
    INTO total
    USING from_date, to_date;
    RETURN total;
END
$function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
