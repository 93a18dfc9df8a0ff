import Foundation

/// A user as PostgreSQL tells users apart: the tenant and the subject's exact UTF-8 bytes.
/// Swift's `String` equality is canonical equivalence ("café" with U+00E9 equals "cafe" with a
/// combining acute; "K" equals the Kelvin sign), while PostgreSQL's `text =` compares bytes:
/// keyed by `String`, two users of the database would be one user in memory, sharing event
/// streams, quotas and queues. Every per-user key in memory is this.
public struct UserKey: Hashable, Sendable {
    public let tenant: UUID
    public let user: [UInt8]

    public init(tenant: UUID, user: String) {
        self.tenant = tenant
        self.user = Array(user.utf8)
    }
}
