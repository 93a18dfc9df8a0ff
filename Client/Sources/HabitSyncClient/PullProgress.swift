import HabitSyncDomain

/// How far the device's pull has come (docs/protocol.md, "A first sync in phases"): told to
/// `SyncEngine.onProgress` after each stored page, and kept by the store (`syncPhase()`).
public struct PullProgress: Sendable, Equatable {
    public enum Phase: String, Sendable, Comparable, CaseIterable {
        /// The main screen's records (habits, reminders, settings, selected apps,
        /// achievements, the derived records, the recent days of history) are still coming.
        case recent
        /// The main screen's records are all held; older history is still coming.
        case history
        /// The first sync has finished: the device holds everything (inside its window).
        case complete

        public static func < (lhs: Phase, rhs: Phase) -> Bool {
            allCases.firstIndex(of: lhs) ?? 0 < allCases.firstIndex(of: rhs) ?? 0
        }
    }

    public let phase: Phase
    /// About how many records the server still has to send in `phase`.
    public let remaining: Int
    /// About how many the phases after it will send.
    public let later: Int
    /// Changes stored by this sync's pull so far.
    public let pulled: Int

    /// The store's phase after a page: `complete` once a page says `hasMore: false`; `recent`
    /// or `history` as a first sync's page says; a later pull's pages (`changes`) leave a
    /// complete store complete.
    static func phase(pagePhase: String?, hasMore: Bool) -> Phase {
        guard hasMore else { return .complete }
        switch pagePhase {
        case "recent": return .recent
        case "history": return .history
        default: return .complete
        }
    }
}
