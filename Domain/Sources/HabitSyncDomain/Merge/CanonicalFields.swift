import Foundation

/// A record of a collection that merges field by field (and an achievement), as the map of its fields in the form
/// the server stores and pulls return them (the record functions of migration 0007): every
/// field present (null when empty), UUIDs in lower case, times in UTC to the millisecond. Two
/// spellings of one value ("…Z" and "…+00:00", upper- and lower-case UUIDs) are one value here,
/// so a field merge compares values, not spellings.
public enum CanonicalFields {
    public static func of(_ record: ValidatedRecord) -> [String: JSONValue]? {
        switch record {
        case .habit(let h):
            var schedule: [String: JSONValue] = ["type": .string(h.schedule.type)]
            if let n = h.schedule.n { schedule["n"] = .number(Double(n)) }
            if let days = h.schedule.weekdays { schedule["weekdays"] = .array(days.map { .string($0.rawValue) }) }
            return [
                "name": .string(h.name), "habitDescription": .string(h.habitDescription), "icon": .string(h.icon),
                "color": text(h.color), "habitType": .string(h.habitType), "goalCount": number(h.goalCount), "goalUnit": .string(h.goalUnit),
                "schedule": .object(schedule), "baselineCount": number(h.baselineCount), "baselineUnit": text(h.baselineUnit),
                "startDate": .string(h.startDate.description), "endDate": text(h.endDate?.description), "createdAt": time(h.createdAt),
            ]
        case .reminder(let r):
            return [
                "habitId": .string(r.habitId.uuidString.lowercased()), "time": .string(r.time), "isActive": .bool(r.isActive),
                "notificationIdentifier": text(r.notificationIdentifier),
            ]
        case .selectedApp(let s):
            return [
                "appName": .string(s.appName), "iconName": .string(s.iconName), "urlScheme": .string(s.urlScheme),
                "isInstalled": .bool(s.isInstalled), "dateAdded": time(s.dateAdded), "orderIndex": number(s.orderIndex),
            ]
        case .userSettings(let s):
            return [
                "timezone": .string(s.timezone), "gatewayTimerDuration": number(s.gatewayTimerDuration),
                "onboardingDeterminationLevel": number(s.onboardingDeterminationLevel),
                "selectedInterestTags": .array(s.selectedInterestTags.map { .string($0) }), "frePhase": .string(s.frePhase),
                "hasCompletedOnboarding": .bool(s.hasCompletedOnboarding),
            ]
        case .achievement(let a):
            return [
                "achievementId": .string(a.achievementId), "title": .string(a.title), "description": .string(a.description),
                "unlockedAt": time(a.unlockedAt), "xpAwarded": number(a.xpAwarded),
            ]
        case .dailyProgress, .xpTransaction, .focusSession, .usageEvent:
            return nil
        }
    }

    private static func text(_ value: String?) -> JSONValue { value.map { .string($0) } ?? .null }
    private static func number(_ value: Int?) -> JSONValue { value.map { .number(Double($0)) } ?? .null }
    private static func time(_ value: Date?) -> JSONValue { value.map { .string(WireTime.format($0)) } ?? .null }
}
