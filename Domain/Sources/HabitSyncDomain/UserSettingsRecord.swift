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
        self = Self.unread
        try Self.declared.read(into: &self, &reader)
        try reader.finish()
    }

    /// What reading starts from; each field's read sets it (to its default when absent).
    private static let unread = UserSettingsRecord(
        timezone: "UTC", gatewayTimerDuration: 30, onboardingDeterminationLevel: 5, selectedInterestTags: [], frePhase: "notStarted", hasCompletedOnboarding: false)

    private init(timezone: String, gatewayTimerDuration: Int, onboardingDeterminationLevel: Int, selectedInterestTags: [String], frePhase: String, hasCompletedOnboarding: Bool) {
        self.timezone = timezone
        self.gatewayTimerDuration = gatewayTimerDuration
        self.onboardingDeterminationLevel = onboardingDeterminationLevel
        self.selectedInterestTags = selectedInterestTags
        self.frePhase = frePhase
        self.hasCompletedOnboarding = hasCompletedOnboarding
    }
}

extension UserSettingsRecord {
    public static let fields = declared.map(\.erased)

    static let declared: [DeclaredField<UserSettingsRecord>] = {
        let declare = RecordFieldDeclarer<UserSettingsRecord>(merge: .latestWins) { if case .userSettings(let s) = $0 { s } else { nil } }
        return [
            declare.field(
                "timezone", "timezone", .text,
                read: { s, r throws(ChangeRejection) in
                    s.timezone = try r.string("timezone", length: 1...64) ?? "UTC"
                    if !r.context.timeZones.contains(s.timezone) {
                        throw r.fail("timezone", "must be an IANA time zone name the server knows, such as Europe/Berlin, not '\(TextRules.quoted(s.timezone))'")
                    }
                }
            ) { .text($0.timezone) },
            declare.field(
                "gatewayTimerDuration", "gateway_timer_duration", .int4,
                read: { s, r throws(ChangeRejection) in s.gatewayTimerDuration = try r.integer("gatewayTimerDuration", range: 15...45) ?? 30 }
            ) { .integer($0.gatewayTimerDuration) },
            declare.field(
                "onboardingDeterminationLevel", "onboarding_determination_level", .int4,
                read: { s, r throws(ChangeRejection) in s.onboardingDeterminationLevel = try r.integer("onboardingDeterminationLevel", range: 1...10) ?? 5 }
            ) { .integer($0.onboardingDeterminationLevel) },
            declare.field(
                "selectedInterestTags", "selected_interest_tags", .textArray,
                read: { s, r throws(ChangeRejection) in
                    var tags: [String] = []
                    for (index, item) in (try r.array("selectedInterestTags", maxCount: 100) ?? []).enumerated() {
                        guard case .string(let tag) = item else { throw r.element("selectedInterestTags", index, "must be a string") }
                        if let (scalar, _) = TextRules.firstControlCharacter(in: tag) {
                            throw r.element("selectedInterestTags", index, "must not contain control characters (\(TextRules.codePoint(scalar)))")
                        }
                        guard TextRules.length(tag) <= 100 else { throw r.element("selectedInterestTags", index, "must be at most 100 characters") }
                        tags.append(tag)
                    }
                    s.selectedInterestTags = tags
                }
            ) { .texts($0.selectedInterestTags) },
            declare.field(
                "frePhase", "fre_phase", .text,
                read: { s, r throws(ChangeRejection) in s.frePhase = try r.oneOf("frePhase", ["notStarted", "phase1Complete", "phase2Complete"]) ?? "notStarted" }
            ) { .text($0.frePhase) },
            declare.field(
                "hasCompletedOnboarding", "has_completed_onboarding", .bool,
                read: { s, r throws(ChangeRejection) in s.hasCompletedOnboarding = try r.bool("hasCompletedOnboarding") ?? false }
            ) { .bool($0.hasCompletedOnboarding) },
        ]
    }()
}
