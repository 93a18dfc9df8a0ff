/// Where a pull stands (docs/protocol.md, "A first sync in phases"). A first sync (a pull
/// without a cursor) sends the main screen's records first (`recent`), then the rest of the
/// user's history (`history`); every pull after it sends what changed (`changes`).
public enum PullPhase: String, Sendable, CaseIterable {
    case recent
    case history
    case changes

    /// Its letter in a cursor.
    var tag: String {
        switch self {
        case .recent: "r"
        case .history: "h"
        case .changes: "c"
        }
    }

    init?(tag: Substring) {
        guard let phase = Self.allCases.first(where: { $0.tag == tag }) else { return nil }
        self = phase
    }
}
