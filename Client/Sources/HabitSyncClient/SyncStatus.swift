/// Where a local record stands with the server.
public enum SyncStatus: String, Sendable, Hashable, CaseIterable {
    /// The server holds exactly this (as of `lastSyncedAt`).
    case synced
    /// A local edit waits in the outbox.
    case pending
    /// The server rejected the last edit; `failure` says why. It is not retried until the app
    /// edits the record again.
    case failed
}
