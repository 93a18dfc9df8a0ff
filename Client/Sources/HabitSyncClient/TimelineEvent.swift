import HabitSyncDomain

/// Something the engine found about the server's history and settled by itself
/// (docs/client.md, "When the server's history changes"), told to `SyncEngine.onTimelineEvent`
/// and to its `log` as it happens.
public enum TimelineEvent: Sendable, Equatable {
    /// The server was restored from a backup holding this user's records up to
    /// `highWaterMark` (`410 reset_required`): `requeued` records held above it were queued to
    /// be pushed again, and the pull started from scratch. No write this device held is lost.
    case serverRestored(highWaterMark: Int64, requeued: Int)
    /// The account this device synced with was erased and started over (`410
    /// account_restarted`): its `discarded` local records are gone, pending edits too.
    case accountRestarted(discarded: Int)
    /// This device's copy of these collections differed from the server's (`digests`): it
    /// pulled from scratch, keeping pending edits. `persisted`: still different after that
    /// pull (a bug worth reporting; the next sync tries again).
    case repaired(collections: [SyncCollection], persisted: Bool)

    var logLine: String {
        switch self {
        case .serverRestored(let mark, let requeued):
            "server restored to version \(mark) of this user: \(requeued) records queued to push again, pulling from scratch"
        case .accountRestarted(let discarded):
            "account erased and started over: \(discarded) local records of the old account discarded"
        case .repaired(let collections, let persisted):
            "local copy differed from the server's in \(collections.map(\.rawValue).joined(separator: ", "))"
                + (persisted ? " after a pull from scratch too" : ": pulled from scratch, pending edits kept")
        }
    }
}
