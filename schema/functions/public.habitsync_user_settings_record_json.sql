-- public.habitsync_user_settings_record_json(s user_settings)
-- A user_settings row as its wire record, as JSON text (the same value as habitsync_user_settings_record).

CREATE OR REPLACE FUNCTION public.habitsync_user_settings_record_json(s user_settings)
 RETURNS text
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$
        SELECT concat(
            '{"timezone":', habitsync_json_text(s.timezone),
            ',"gatewayTimerDuration":', habitsync_json_integer(s.gateway_timer_duration),
            ',"onboardingDeterminationLevel":', habitsync_json_integer(s.onboarding_determination_level),
            ',"selectedInterestTags":', coalesce(to_json(s.selected_interest_tags)::text, 'null'),
            ',"frePhase":', habitsync_json_text(s.fre_phase),
            ',"hasCompletedOnboarding":', habitsync_json_bool(s.has_completed_onboarding), '}')
    $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
