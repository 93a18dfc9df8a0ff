import HabitSyncDomain

/// SQL that renders rows in the wire format of a pulled change, using the record functions of
/// migration 0003. Shared by pull and by the `current` of superseded results.
enum WireChangeSQL {
    static func recordFunction(_ collection: SyncCollection) -> String {
        switch collection {
        case .habits: "habitsync_habit_record"
        case .reminders: "habitsync_reminder_record"
        case .dailyProgress: "habitsync_daily_progress_record"
        case .xpTransactions: "habitsync_xp_transaction_record"
        case .achievements: "habitsync_achievement_record"
        case .focusSessions: "habitsync_focus_session_record"
        case .usageEvents: "habitsync_usage_event_record"
        case .selectedApps: "habitsync_selected_app_record"
        case .userSettings: "habitsync_user_settings_record"
        case .globalStreak: "habitsync_global_streak_record"
        case .userProgress: "habitsync_user_progress_record"
        case .usageStreak: "habitsync_usage_streak_record"
        }
    }

    /// `{"collection", "op", "id", "serverVersion", "updatedAt", "updatedBy", "record"?}` for
    /// the row aliased `alias`; tombstones carry no record.
    static func change(_ collection: SyncCollection, alias a: String) -> String {
        """
        (jsonb_build_object('collection', '\(collection.rawValue)', 'op', CASE WHEN \(a).deleted_at IS NULL THEN 'upsert' ELSE 'delete' END, \
        'id', \(a).id, 'serverVersion', \(a).server_version, 'updatedAt', habitsync_wire_time(\(a).updated_at), 'updatedBy', \(a).updated_by) \
        || CASE WHEN \(a).deleted_at IS NULL THEN jsonb_build_object('record', \(recordFunction(collection))(\(a))) ELSE '{}'::jsonb END)
        """
    }
}
