import Foundation

/// A push batch as the device sends it: its id and body, persisted before the first send and
/// sent byte for byte again until the server answers (the server recognises a retry by both).
public struct OutgoingBatch: Sendable, Equatable {
    public let batchID: UUID
    /// The `POST /v1/sync/push` body.
    public let body: Data
    public let changeCount: Int
}
