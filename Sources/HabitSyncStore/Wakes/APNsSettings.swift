import Foundation

/// A tenant's APNs token-auth key (`tenant_apns`, migration 0047; `tenant set-apns`): what its
/// devices' background wakes are sent with. Checked by the table's own rules before anything
/// is stored (`APNsSettingsTests` holds the two together).
public struct APNsSettings: Sendable, Equatable {
    public enum Environment: String, Sendable, CaseIterable {
        case sandbox, production
    }

    public let keyID: String
    public let teamID: String
    public let topic: String
    public let environment: Environment
    /// The .p8 file: a P-256 private key in PKCS#8 PEM.
    public let signingKey: String
    public let wakeInterval: Duration

    public static let wakeIntervals: ClosedRange<Int> = 1...86_400

    /// Why settings are refused: the option and the rule.
    public struct Refusal: Error, Equatable, CustomStringConvertible {
        public let option: String
        public let rule: String
        public var description: String { "\(option): \(rule)" }
    }

    public init(keyID: String, teamID: String, topic: String, environment: Environment, signingKey: String, wakeInterval: Duration = .seconds(60)) throws(Refusal) {
        guard Self.isAppleID(keyID) else { throw Refusal(option: "--key-id", rule: "10 capital letters or digits, as Apple shows it") }
        guard Self.isAppleID(teamID) else { throw Refusal(option: "--team-id", rule: "10 capital letters or digits, as Apple shows it") }
        guard Self.isBundleID(topic) else { throw Refusal(option: "--topic", rule: "the app's bundle id: letters, digits and hyphens in two or more parts separated by dots, at most 255 bytes") }
        guard signingKey.utf8.count >= 100, signingKey.utf8.count <= 4096, signingKey.hasPrefix("-----BEGIN PRIVATE KEY-----") else {
            throw Refusal(option: "--key-file", rule: "the .p8 file Apple gave: a PKCS#8 PEM, -----BEGIN PRIVATE KEY-----")
        }
        let seconds = wakeInterval / .seconds(1)
        guard seconds.rounded() == seconds, Self.wakeIntervals.contains(Int(seconds)) else {
            throw Refusal(option: "--wake-interval", rule: "whole seconds from 1s to 86400s")
        }
        self.keyID = keyID
        self.teamID = teamID
        self.topic = topic
        self.environment = environment
        self.signingKey = signingKey
        self.wakeInterval = wakeInterval
    }

    static func isAppleID(_ text: String) -> Bool {
        text.utf8.count == 10 && text.utf8.allSatisfy { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    static func isBundleID(_ text: String) -> Bool {
        guard text.utf8.count <= 255 else { return false }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count >= 2
            && parts.allSatisfy { part in
                !part.isEmpty
                    && part.utf8.allSatisfy {
                        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0)
                            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "-")
                    }
            }
    }
}
