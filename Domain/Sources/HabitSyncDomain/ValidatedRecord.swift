/// A record that passed its collection's rules, typed by collection.
public enum ValidatedRecord: Sendable, Equatable {
    case habit(HabitRecord)
    case reminder(ReminderRecord)
    case dailyProgress(DailyProgressRecord)
    case xpTransaction(XPTransactionRecord)
    case achievement(AchievementRecord)
    case focusSession(FocusSessionRecord)
    case usageEvent(UsageEventRecord)
    case selectedApp(SelectedAppRecord)
    case userSettings(UserSettingsRecord)

    /// Validates `fields` by the rules of `collection` (not a derived one).
    public static func validate(_ collection: SyncCollection, _ fields: [String: JSONValue], context: ValidationContext) throws(ChangeRejection) -> ValidatedRecord {
        switch collection {
        case .habits: .habit(try HabitRecord(fields, context: context))
        case .reminders: .reminder(try ReminderRecord(fields, context: context))
        case .dailyProgress: .dailyProgress(try DailyProgressRecord(fields, context: context))
        case .xpTransactions: .xpTransaction(try XPTransactionRecord(fields, context: context))
        case .achievements: .achievement(try AchievementRecord(fields, context: context))
        case .focusSessions: .focusSession(try FocusSessionRecord(fields, context: context))
        case .usageEvents: .usageEvent(try UsageEventRecord(fields, context: context))
        case .selectedApps: .selectedApp(try SelectedAppRecord(fields, context: context))
        case .userSettings: .userSettings(try UserSettingsRecord(fields, context: context))
        case .globalStreak, .userProgress, .usageStreak:
            throw ChangeRejection(.derivedCollection, field: "collection", "\(collection.rawValue) is computed by the server and cannot be pushed")
        }
    }
}
