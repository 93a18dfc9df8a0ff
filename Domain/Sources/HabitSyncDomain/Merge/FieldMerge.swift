/// The merge rule for one record's fields (issue 26: habits, reminders, user settings, selected
/// apps): each field a device changed carries the device's time of that change; per field the
/// greater `LWWKey` wins; a field a change does not carry is left as it is (an old app that does
/// not know a field cannot erase it). Every field write that loses is reported, to be kept in
/// the conflict log with the winner that beat it.
///
/// A pure function of the writes received, in any order (`MergeModelTests`). The store applies
/// it through `FieldMergedRecord`, which adds deletes, validation and results.
public struct FieldMerge: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public let value: JSONValue
        public let at: LWWKey

        public init(value: JSONValue, at: LWWKey) {
            self.value = value
            self.at = at
        }

        /// The value's text as bytes: what PostgreSQL stores and compares.
        var bytes: [UInt8] { Array(value.jsonText.utf8) }

        /// The same write: same key and the same bytes (not Swift's canonical equivalence,
        /// under which "café" composed and decomposed are one value).
        public static func == (lhs: Entry, rhs: Entry) -> Bool { lhs.at == rhs.at && lhs.bytes == rhs.bytes }
    }

    /// A field write that did not win: what it carried, and the write that beat it.
    public struct Loss: Sendable, Equatable {
        public let field: String
        public let lost: Entry
        public let winner: Entry
    }

    /// By field name. Field names are the protocol's own ASCII names, validated before a merge.
    public private(set) var fields: [String: Entry] = [:]

    public init() {}

    public init(_ fields: [String: Entry]) { self.fields = fields }

    /// Applies one change: the fields it carries, all changed at `at`. Returns the losses: the
    /// incoming fields that lost, and the stored ones the change replaced.
    @discardableResult
    public mutating func apply(_ changed: [String: JSONValue], at: LWWKey) -> [Loss] {
        apply(changed.mapValues { Entry(value: $0, at: at) })
    }

    /// Applies one change whose fields carry times of their own. In `earliest` fields (an
    /// achievement's `unlockedAt`) the earlier value wins instead, whatever its key.
    @discardableResult
    public mutating func apply(_ changed: [String: Entry], earliest: Set<String> = []) -> [Loss] {
        var losses: [Loss] = []
        for (field, incoming) in changed.sorted(by: { $0.key < $1.key }) {
            guard let stored = fields[field] else {
                fields[field] = incoming
                continue
            }
            if stored == incoming { continue }
            if Self.wins(incoming, over: stored, earliest: earliest.contains(field)) {
                fields[field] = incoming
                losses.append(Loss(field: field, lost: stored, winner: incoming))
            } else {
                losses.append(Loss(field: field, lost: incoming, winner: stored))
            }
        }
        return losses
    }

    /// The later write; of two at the same key (one device, one millisecond), the one whose
    /// value sorts later as JSON text, so the outcome never depends on arrival. For an
    /// `earliest` field, the earlier value (times in the wire format sort as their text), and of
    /// one value the later write.
    static func wins(_ a: Entry, over b: Entry, earliest: Bool = false) -> Bool {
        if earliest, a.bytes != b.bytes { return a.bytes.lexicographicallyPrecedes(b.bytes) }
        if a.at != b.at { return b.at < a.at }
        return b.bytes.lexicographicallyPrecedes(a.bytes)
    }

    /// The record as the fields stand.
    public var record: [String: JSONValue] { fields.mapValues(\.value) }
}
