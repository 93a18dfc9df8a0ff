/// How concurrent writes of one field settle (`docs/protocol.md`, "Conflicts").
public enum FieldMergeRule: Sendable, Equatable {
    /// Field by field: the write with the greater `(updatedAt, device)` wins (`FieldMerge`).
    case latestWins
    /// Field by field, but the earlier value wins whoever wrote last (an achievement's unlock).
    case earliestWins
    /// The whole record's last writer wins (records that do not merge by field).
    case wholeRecord
    /// Every device's additions add up (`ProgressCounter`): a day's count.
    case counter
    /// Written once: the same again is a replay, anything else refused.
    case appendOnly
}
