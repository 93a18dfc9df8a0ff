-- public.habitsync_user_settings_record(s user_settings)
-- A user_settings row as its wire record.

CREATE OR REPLACE FUNCTION public.habitsync_user_settings_record(s user_settings)
 RETURNS jsonb
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$
        SELECT jsonb_build_object(
            'timezone', s.timezone, 'gatewayTimerDuration', s.gateway_timer_duration,
            'onboardingDeterminationLevel', s.onboarding_determination_level,
            'selectedInterestTags', to_jsonb(s.selected_interest_tags), 'frePhase', s.fre_phase,
            'hasCompletedOnboarding', s.has_completed_onboarding)
    $function$

-- Privileges: PostgreSQL's default (EXECUTE to PUBLIC)
