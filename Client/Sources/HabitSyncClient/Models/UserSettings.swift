import Foundation
import HabitSyncDomain

/// The `userSettings` record: one per user (the store keeps one; the server re-keys any id to
/// the user's own). A field left nil takes the server's default.
public struct UserSettings: DeletableModel {
    public static let collection = SyncCollection.userSettings

    public enum FREPhase: String, Codable, Sendable { case notStarted, phase1Complete, phase2Complete }

    /// An IANA time zone name; the user's calendar days follow it.
    public var timezone: String?
    public var gatewayTimerDuration: Int?
    public var onboardingDeterminationLevel: Int?
    public var selectedInterestTags: [String]?
    public var frePhase: FREPhase?
    public var hasCompletedOnboarding: Bool?

    public init(
        timezone: String? = nil, gatewayTimerDuration: Int? = nil, onboardingDeterminationLevel: Int? = nil,
        selectedInterestTags: [String]? = nil, frePhase: FREPhase? = nil, hasCompletedOnboarding: Bool? = nil
    ) {
        self.timezone = timezone
        self.gatewayTimerDuration = gatewayTimerDuration
        self.onboardingDeterminationLevel = onboardingDeterminationLevel
        self.selectedInterestTags = selectedInterestTags
        self.frePhase = frePhase
        self.hasCompletedOnboarding = hasCompletedOnboarding
    }
}
