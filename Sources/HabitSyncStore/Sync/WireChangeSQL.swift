import HabitSyncDomain
import LibPQClient

/// SQL that renders rows in the wire format of a pulled change, as JSON text built by the
/// record functions of migration 0007 (one concat() per row: a fraction of the cost of
/// building jsonb per row). Shared by pull and by the `current` of superseded results.
enum WireChangeSQL {
    static func recordFunction(_ collection: SyncCollection) -> PGFragment {
        switch collection {
        case .habits: "habitsync_habit_record_json"
        case .reminders: "habitsync_reminder_record_json"
        case .dailyProgress: "habitsync_daily_progress_record_json"
        case .xpTransactions: "habitsync_xp_transaction_record_json"
        case .achievements: "habitsync_achievement_record_json"
        case .focusSessions: "habitsync_focus_session_record_json"
        case .usageEvents: "habitsync_usage_event_record_json"
        case .selectedApps: "habitsync_selected_app_record_json"
        case .userSettings: "habitsync_user_settings_record_json"
        case .globalStreak: "habitsync_global_streak_record_json"
        case .userProgress: "habitsync_user_progress_record_json"
        case .usageStreak: "habitsync_usage_streak_record_json"
        }
    }

    /// The record of the row aliased `alias`, as JSON text. Daily progress gets its timestamps
    /// rendered here: a subquery inside the SQL function would stop PostgreSQL inlining it.
    /// The row goes in as `ROW(alias.*)::table`, not as `alias`: on a Citus shard a row has the
    /// shard's type (`habits_102008`), which the function does not take; PostgreSQL still
    /// inlines the function and reads the columns straight from the row.
    static func record(_ collection: SyncCollection, alias a: PGFragment) -> PGFragment {
        let row: PGFragment = "ROW(\(a).*)::\(PGFragment.identifier(collection.table))"
        guard collection == .dailyProgress else { return "\(recordFunction(collection))(\(row))" }
        return """
            \(recordFunction(collection))(\(row), \
            (SELECT string_agg(habitsync_json_time(t), ',' ORDER BY o) FROM unnest(\(a).timestamps) WITH ORDINALITY AS u(t, o)))
            """
    }

    /// `{"collection", "op", "id", "serverVersion", "updatedAt", "updatedBy", "record"?}` for
    /// the row aliased `alias`, as text; tombstones carry no record (concat skips the NULL).
    static func change(_ collection: SyncCollection, alias a: PGFragment) -> PGFragment {
        """
        concat(\(PGFragment.literal("{\"collection\":\"\(collection.rawValue)\",\"op\":\"")), \
        CASE WHEN \(a).deleted_at IS NULL THEN 'upsert' ELSE 'delete' END, \
        '","id":', habitsync_json_uuid(\(a).id), ',"serverVersion":', \(a).server_version, \
        ',"updatedAt":', habitsync_json_time(\(a).updated_at), ',"updatedBy":', habitsync_json_text(\(a).updated_by), \
        CASE WHEN \(a).deleted_at IS NULL THEN ',"record":' || \(record(collection, alias: a)) END, '}')
        """
    }
}
