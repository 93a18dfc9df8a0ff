import Foundation

/// The `userSettings` record: one per user, every field optional with a default.
public struct UserSettingsRecord: Sendable, Equatable {
    public var timezone: String
    public var gatewayTimerDuration: Int
    public var onboardingDeterminationLevel: Int
    public var selectedInterestTags: [String]
    public var frePhase: String
    public var hasCompletedOnboarding: Bool

    public init(_ fields: [String: JSONValue], context: ValidationContext) throws(ChangeRejection) {
        var reader = FieldReader(fields, context: context)
        timezone = try reader.string("timezone", length: 1...64) ?? "UTC"
        if !context.timeZones.contains(timezone) {
            throw reader.fail("timezone", "must be an IANA time zone name the server knows, such as Europe/Berlin, not '\(TextRules.quoted(timezone))'")
        }
        gatewayTimerDuration = try reader.integer("gatewayTimerDuration", range: 15...45) ?? 30
        onboardingDeterminationLevel = try reader.integer("onboardingDeterminationLevel", range: 1...10) ?? 5
        var tags: [String] = []
        for (index, item) in (try reader.array("selectedInterestTags", maxCount: 100) ?? []).enumerated() {
            guard case .string(let tag) = item else { throw reader.element("selectedInterestTags", index, "must be a string") }
            if let (scalar, _) = TextRules.firstControlCharacter(in: tag) {
                throw reader.element("selectedInterestTags", index, "must not contain control characters (\(TextRules.codePoint(scalar)))")
            }
            guard TextRules.length(tag) <= 100 else { throw reader.element("selectedInterestTags", index, "must be at most 100 characters") }
            tags.append(tag)
        }
        selectedInterestTags = tags
        frePhase = try reader.oneOf("frePhase", ["notStarted", "phase1Complete", "phase2Complete"]) ?? "notStarted"
        hasCompletedOnboarding = try reader.bool("hasCompletedOnboarding") ?? false
        try reader.finish()
    }
}

extension UserSettingsRecord {
    public static let fields: [RecordField] = {
        let declare = RecordFieldDeclarer<UserSettingsRecord>(merge: .latestWins) { if case .userSettings(let s) = $0 { s } else { nil } }
        return [
            declare.field("timezone", "timezone", .text) { .text($0.timezone) },
            declare.field("gatewayTimerDuration", "gateway_timer_duration", .int4) { .integer($0.gatewayTimerDuration) },
            declare.field("onboardingDeterminationLevel", "onboarding_determination_level", .int4) { .integer($0.onboardingDeterminationLevel) },
            declare.field("selectedInterestTags", "selected_interest_tags", .textArray) { .texts($0.selectedInterestTags) },
            declare.field("frePhase", "fre_phase", .text) { .text($0.frePhase) },
            declare.field("hasCompletedOnboarding", "has_completed_onboarding", .bool) { .bool($0.hasCompletedOnboarding) },
        ]
    }()
}
