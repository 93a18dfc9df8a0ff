/// What became of one pushed change (its result's `status`; docs/protocol.md, "Push").
public enum ChangeStatus: String, Sendable, CaseIterable {
    case applied, unchanged, superseded, rejected

    /// The change did not win: the conflict log keeps it.
    public var lost: Bool { self == .superseded || self == .rejected }
}
