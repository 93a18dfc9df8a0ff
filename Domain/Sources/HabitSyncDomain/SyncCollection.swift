/// The collections of docs/data-model.md, by wire name.
public enum SyncCollection: String, Sendable, CaseIterable, Hashable {
    case habits
    case reminders
    case dailyProgress
    case xpTransactions
    case achievements
    case focusSessions
    case usageEvents
    case selectedApps
    case userSettings
    case globalStreak
    case userProgress
    case usageStreak

    public enum Kind: Sendable {
        /// Last-writer-wins with tombstones.
        case lastWriterWins
        /// The first write of an id is kept; the same again is a no-op, anything else refused.
        case appendOnly
        /// One per natural key (`achievementId`), merged field by field; the earliest
        /// `unlockedAt` wins.
        case insertOnce
        /// Computed by the server; never accepted from devices.
        case derived
    }

    public var kind: Kind {
        switch self {
        case .habits, .reminders, .dailyProgress, .focusSessions, .selectedApps, .userSettings: .lastWriterWins
        case .xpTransactions, .usageEvents: .appendOnly
        case .achievements: .insertOnce
        case .globalStreak, .userProgress, .usageStreak: .derived
        }
    }

    /// Whether a write changes only the fields it carries, each settled by its own time
    /// (`FieldMergedRecord`) instead of the whole record by the record's.
    public var mergesByField: Bool {
        switch self {
        case .habits, .reminders, .selectedApps, .userSettings: true
        default: false
        }
    }

    /// The SQL table.
    public var table: String {
        switch self {
        case .habits: "habits"
        case .reminders: "reminders"
        case .dailyProgress: "daily_progress"
        case .xpTransactions: "xp_transactions"
        case .achievements: "achievements"
        case .focusSessions: "focus_sessions"
        case .usageEvents: "usage_events"
        case .selectedApps: "selected_apps"
        case .userSettings: "user_settings"
        case .globalStreak: "global_streaks"
        case .userProgress: "user_progress"
        case .usageStreak: "usage_streaks"
        }
    }

    /// Order in which a batch's collections are applied: what others refer to comes first.
    public static let applyOrder: [SyncCollection] = [
        .userSettings, .habits, .reminders, .dailyProgress, .xpTransactions, .achievements, .focusSessions, .usageEvents, .selectedApps,
    ]
}
