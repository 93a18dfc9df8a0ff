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
    public static func validate(_ collection: SyncCollection, _ fields: [String: JSONValue]) throws(ChangeRejection) -> ValidatedRecord {
        switch collection {
        case .habits: .habit(try HabitRecord(fields))
        case .reminders: .reminder(try ReminderRecord(fields))
        case .dailyProgress: .dailyProgress(try DailyProgressRecord(fields))
        case .xpTransactions: .xpTransaction(try XPTransactionRecord(fields))
        case .achievements: .achievement(try AchievementRecord(fields))
        case .focusSessions: .focusSession(try FocusSessionRecord(fields))
        case .usageEvents: .usageEvent(try UsageEventRecord(fields))
        case .selectedApps: .selectedApp(try SelectedAppRecord(fields))
        case .userSettings: .userSettings(try UserSettingsRecord(fields))
        case .globalStreak, .userProgress, .usageStreak:
            throw ChangeRejection(.derivedCollection, field: "collection", "\(collection.rawValue) is computed by the server and cannot be pushed")
        }
    }
}
