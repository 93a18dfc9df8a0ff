/// The merge rule for one day's progress of one habit as a counter (issue 26): devices send
/// what they did (`add`, an increment or decrement, counted once by its id) or an absolute
/// value (`set`, last writer wins). The count is the latest set's value plus every addition
/// made after it (by `LWWKey`: the device's time, then its id as bytes); additions at or before
/// the set are taken to be included in it. Never below zero.
///
/// A pure function of the set of operations received: replays change nothing, and the order in
/// which operations arrive does not matter, so every replica that received the same operations
/// holds the same count. `MergeModelTests` checks these properties.
///
/// The store computes each day's count with it (`ProgressDayMerge` decides the latest set and
/// lists a batch's additions; the store adds the additions it keeps), protocol 2's `increment`
/// being an addition and a whole-record upsert or a delete a set (docs/protocol.md, "Counting").
public struct ProgressCounter: Sendable, Equatable {
    public struct Addition: Sendable, Hashable {
        public let delta: Int
        public let at: LWWKey

        public init(delta: Int, at: LWWKey) {
            self.delta = delta
            self.at = at
        }
    }

    public struct Setting: Sendable, Hashable {
        public let value: Int
        public let at: LWWKey

        public init(value: Int, at: LWWKey) {
            self.value = value
            self.at = at
        }

        /// The later setting; of two at the same key (one device, one millisecond), the larger
        /// value, so that the choice does not depend on arrival.
        static func later(_ a: Setting, _ b: Setting) -> Setting {
            if a.at != b.at { return a.at < b.at ? b : a }
            return a.value >= b.value ? a : b
        }

        /// Whether this setting replaces `stored` (is `later` of the two and not the same).
        func replaces(_ stored: Setting) -> Bool { Setting.later(stored, self) == self && stored != self }
    }

    public enum Operation: Sendable, Hashable {
        /// `id` names the addition for good (a device's batch id and the change's index): the
        /// same id again is the same addition, whatever it carries.
        case add(id: String, Addition)
        case set(Setting)
    }

    /// By id, as bytes: ids carry device ids, and two devices whose ids differ only in Unicode
    /// normalisation are two devices (`ExactText`).
    public private(set) var additions: [ExactText: Addition] = [:]
    public private(set) var latestSetting: Setting?

    public init() {}

    public init(_ operations: some Sequence<Operation>) {
        for operation in operations { apply(operation) }
    }

    public mutating func apply(_ operation: Operation) {
        switch operation {
        case .add(let id, let addition):
            // The first arrival of an id stands; a retry carries the same content anyway, and
            // keeping the smaller key of a (misbehaving) duplicate keeps arrival order irrelevant.
            if let existing = additions[ExactText(id)], !(addition.at < existing.at || (addition.at == existing.at && addition.delta < existing.delta)) {
                return
            }
            additions[ExactText(id)] = addition
        case .set(let setting):
            latestSetting = latestSetting.map { Setting.later($0, setting) } ?? setting
        }
    }

    /// Merges what another replica received.
    public mutating func merge(_ other: ProgressCounter) {
        for (id, addition) in other.additions { apply(.add(id: id.text, addition)) }
        if let setting = other.latestSetting { apply(.set(setting)) }
    }

    /// Additions the latest setting had not seen (made after it).
    public var unseenAdditions: [Addition] {
        guard let setting = latestSetting else { return Array(additions.values) }
        return additions.values.filter { setting.at < $0.at }
    }

    public var count: Int {
        let base = latestSetting?.value ?? 0
        return max(0, unseenAdditions.reduce(base) { $0 + $1.delta })
    }
}
