import Foundation
import HabitSyncDomain

/// The outcome of one pushed change, as the push's answer reports it (`PushAnswer`; the HTTP
/// layer encodes it).
public struct ChangeResult: Sendable {
    public let index: Int
    public internal(set) var id: String?
    public internal(set) var status: ChangeStatus
    public internal(set) var serverVersion: Int64? = nil
    public internal(set) var canonicalId: UUID? = nil
    public internal(set) var clamped = false
    /// The winning change as wire JSON, as PostgreSQL rendered it (superseded only).
    public internal(set) var current: String? = nil
    public internal(set) var error: ChangeRejection? = nil
    /// The stored LWW key that won (superseded only), for the conflict log.
    var winningKey: (updatedAt: Date, updatedBy: String)? = nil

    init(
        index: Int, id: String? = nil, status: ChangeStatus, serverVersion: Int64? = nil, error: ChangeRejection? = nil
    ) {
        self.index = index
        self.id = id
        self.status = status
        self.serverVersion = serverVersion
        self.error = error
    }
}
