import Foundation
import NIOSSL

/// How this replica sends background wakes through APNs (docs/operations.md, "Waking iPhones").
public struct WakeSettings: Sendable {
    /// Whether this replica sends them (on Citus it never does: deploy/README.md).
    public var enabled = true
    /// Apple's hosts, by environment; a test's loopback server instead when set.
    public var endpoint: String?
    /// Certificates trusted besides the system's (a test's own).
    public var additionalTrustRoots: [NIOSSLCertificate] = []
    /// For one request to APNs.
    public var timeout: Duration = .seconds(10)
    /// How often the waker looks for wakes due when it found none.
    public var pollInterval: Duration = .seconds(1)
    /// Wakes claimed, and sent at once, per round.
    public var concurrency = 32

    public init() {}

    public static let productionHost = "https://api.push.apple.com"
    public static let sandboxHost = "https://api.sandbox.push.apple.com"
}
