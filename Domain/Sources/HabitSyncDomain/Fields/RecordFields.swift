/// Every collection's field declarations (`RecordField`), by collection: what the store writes,
/// what the field merge compares, and what the parity tests hold the schema and the contract to.
public enum RecordFields {
    /// The fields of a collection devices push, in column order; nil for a derived collection.
    public static func of(_ collection: SyncCollection) -> [RecordField]? {
        switch collection {
        case .habits: HabitRecord.fields
        case .reminders: ReminderRecord.fields
        case .dailyProgress: DailyProgressRecord.fields
        case .xpTransactions: XPTransactionRecord.fields
        case .achievements: AchievementRecord.fields
        case .focusSessions: FocusSessionRecord.fields
        case .usageEvents: UsageEventRecord.fields
        case .selectedApps: SelectedAppRecord.fields
        case .userSettings: UserSettingsRecord.fields
        case .globalStreak, .userProgress, .usageStreak: nil
        }
    }

    /// The collection a validated record belongs to.
    public static func collection(of record: ValidatedRecord) -> SyncCollection {
        switch record {
        case .habit: .habits
        case .reminder: .reminders
        case .dailyProgress: .dailyProgress
        case .xpTransaction: .xpTransactions
        case .achievement: .achievements
        case .focusSession: .focusSessions
        case .usageEvent: .usageEvents
        case .selectedApp: .selectedApps
        case .userSettings: .userSettings
        }
    }
}
