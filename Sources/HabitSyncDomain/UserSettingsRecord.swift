import Foundation

/// The `userSettings` record: one per user, every field optional with a default.
public struct UserSettingsRecord: Sendable, Equatable {
    public var timezone: String
    public var gatewayTimerDuration: Int
    public var onboardingDeterminationLevel: Int
    public var selectedInterestTags: [String]
    public var frePhase: String
    public var hasCompletedOnboarding: Bool

    public init(_ fields: [String: JSONValue]) throws(ChangeRejection) {
        var reader = FieldReader(fields)
        timezone = try reader.string("timezone", length: 1...64) ?? "UTC"
        if timezone.range(of: "^[A-Za-z0-9_+/-]+$", options: .regularExpression) == nil || TimeZone(identifier: timezone) == nil {
            throw reader.fail("timezone", "must be an IANA time zone name such as Europe/Berlin, not '\(timezone)'")
        }
        gatewayTimerDuration = try reader.integer("gatewayTimerDuration", range: 15...45) ?? 30
        onboardingDeterminationLevel = try reader.integer("onboardingDeterminationLevel", range: 1...10) ?? 5
        var tags: [String] = []
        for (index, item) in (try reader.array("selectedInterestTags", maxCount: 100) ?? []).enumerated() {
            guard case .string(let tag) = item else { throw reader.element("selectedInterestTags", index, "must be a string") }
            tags.append(tag)
        }
        selectedInterestTags = tags
        frePhase = try reader.oneOf("frePhase", ["notStarted", "phase1Complete", "phase2Complete"]) ?? "notStarted"
        hasCompletedOnboarding = try reader.bool("hasCompletedOnboarding") ?? false
        try reader.finish()
    }
}
