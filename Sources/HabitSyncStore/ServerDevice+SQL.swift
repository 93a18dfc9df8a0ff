import HabitSyncDomain
import LibPQClient

extension ServerDevice {
    /// `name` as a literal in statement text (in the statement's text, not a parameter: the
    /// statements that write it keep one prepared form).
    static let sql = PGFragment.literal(name)
}
