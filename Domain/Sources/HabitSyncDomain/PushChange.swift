import Foundation

/// One change of a push that passed every rule of its collection and the envelope of a change.
public struct PushChange: Sendable, Equatable {
    public let index: Int
    public let collection: SyncCollection
    public let op: ChangeOperation
    public let id: UUID
    /// After the future-skew clamp.
    public let updatedAt: Date
    public let clamped: Bool
    /// Nil for deletes.
    public let record: ValidatedRecord?
    /// The record's fields as sent: what a record merged by field is built from (see
    /// `fieldTimes`).
    public let rawRecord: [String: JSONValue]?
    /// Daily progress only (protocol 2): what the device added to the day's count (negative:
    /// took away) since the state the server last acknowledged to it. The record's
    /// `progressCount` is then the device's view, not a value to store.
    public let increment: Int?
    /// A record that merges field by field (`SyncCollection.mergesByField`) under protocol 2:
    /// the time of each field that changed before `updatedAt` (after the same clamp). Then
    /// `record` is nil and `rawRecord` holds the fields sent, which need not be a whole record:
    /// they are validated with the stored ones (`FieldMergedRecord`).
    public let fieldTimes: [String: Date]

    public static let changeFields: Set<String> = ["collection", "op", "id", "updatedAt", "record"]
    /// The fields a change may carry under protocol 2.
    public static let changeFieldsV2: Set<String> = changeFields.union(["increment", "fieldTimes"])
    /// How far one change may move a day's count.
    public static let incrementRange = -1000...1000

    public init(
        index: Int, collection: SyncCollection, op: ChangeOperation, id: UUID, updatedAt: Date, clamped: Bool,
        record: ValidatedRecord?, rawRecord: [String: JSONValue]?, increment: Int? = nil, fieldTimes: [String: Date] = [:]
    ) {
        self.index = index
        self.collection = collection
        self.op = op
        self.id = id
        self.updatedAt = updatedAt
        self.clamped = clamped
        self.record = record
        self.rawRecord = rawRecord
        self.increment = increment
        self.fieldTimes = fieldTimes
    }

    /// Validates change `index` of a batch. `updatedAt` more than `context.maximumSkew` ahead of
    /// `context.now` is clamped to `now`, so a device with a wrong clock cannot win every future conflict.
    public static func validate(_ fields: [String: JSONValue], index: Int, context: ValidationContext) throws(ChangeRejection) -> PushChange {
        let allowed = context.protocolVersion >= 2 ? changeFieldsV2 : changeFields
        if let unknown = fields.keys.filter({ !allowed.contains($0) }).sorted().first {
            let name = TextRules.quoted(unknown)
            let hint = unknown == "increment" ? "; increment needs \"protocolVersion\": 2 in the push" : ""
            throw ChangeRejection(
                .unknownField, field: name, "\(name) is not a field of a change (collection, op, id, updatedAt, record\(context.protocolVersion >= 2 ? ", increment, fieldTimes" : ""))\(hint)")
        }
        guard case .string(let collectionName)? = fields["collection"] else {
            throw ChangeRejection(.invalidField, field: "collection", "collection must be a string")
        }
        guard let collection = SyncCollection(rawValue: collectionName) else {
            throw ChangeRejection(.unknownCollection, field: "collection", "there is no collection '\(TextRules.quoted(collectionName))'")
        }
        if collection.kind == .derived {
            throw ChangeRejection(.derivedCollection, field: "collection", "\(collectionName) is computed by the server and cannot be pushed")
        }
        guard case .string(let opName)? = fields["op"], let op = ChangeOperation(rawValue: opName) else {
            throw ChangeRejection(.invalidField, field: "op", "op must be upsert or delete")
        }
        guard case .string(let idText)? = fields["id"], let id = UUID(uuidString: idText) else {
            throw ChangeRejection(.invalidField, field: "id", "id must be a UUID")
        }
        guard case .string(let updatedText)? = fields["updatedAt"], let sentAt = WireTime.parse(updatedText, years: LocalDate.recordYears) else {
            throw ChangeRejection(
                .invalidField, field: "updatedAt",
                "updatedAt must be an RFC 3339 timestamp with an offset in years \(LocalDate.recordYears.lowerBound)–\(LocalDate.recordYears.upperBound), such as 2026-11-20T08:15:30.123Z")
        }
        let now = context.now
        let clamped = sentAt.timeIntervalSince(now) > context.maximumSkew
        let updatedAt = clamped ? Date(timeIntervalSince1970: Double(WireTime.milliseconds(now)) / 1000) : sentAt
        var increment: Int?
        if let value = fields["increment"] {
            guard collection == .dailyProgress, op == .upsert else {
                throw ChangeRejection(.invalidField, field: "increment", "only a dailyProgress upsert carries an increment")
            }
            guard case .number(let number) = value, number.isFinite, number.rounded() == number,
                Double(incrementRange.lowerBound) <= number, number <= Double(incrementRange.upperBound)
            else {
                throw ChangeRejection(.invalidField, field: "increment", "increment must be a whole number from \(incrementRange.lowerBound) to \(incrementRange.upperBound)")
            }
            increment = Int(number)
        }
        if fields["fieldTimes"] != nil, !(collection.mergesByField && op == .upsert) {
            throw ChangeRejection(.invalidField, field: "fieldTimes", "only an upsert of habits, reminders, selectedApps or userSettings carries fieldTimes")
        }
        switch (op, fields["record"]) {
        case (.upsert, .object(let record)?) where collection.mergesByField && context.protocolVersion >= 2:
            let times = try fieldTimes(fields["fieldTimes"], record: record, sentAt: sentAt, updatedAt: updatedAt)
            return PushChange(
                index: index, collection: collection, op: op, id: id, updatedAt: updatedAt, clamped: clamped,
                record: nil, rawRecord: record, fieldTimes: times)
        case (.upsert, .object(let record)?):
            return PushChange(
                index: index, collection: collection, op: op, id: id, updatedAt: updatedAt, clamped: clamped,
                record: try ValidatedRecord.validate(collection, record, context: context), rawRecord: record, increment: increment)
        case (.upsert, _):
            throw ChangeRejection(.invalidField, field: "record", "an upsert needs a record object")
        case (.delete, nil), (.delete, .null?):
            if collection.kind != .lastWriterWins {
                throw ChangeRejection(.immutableRecord, field: "op", "\(collectionName) records cannot be deleted")
            }
            return PushChange(index: index, collection: collection, op: op, id: id, updatedAt: updatedAt, clamped: clamped, record: nil, rawRecord: nil)
        case (.delete, _):
            throw ChangeRejection(.invalidField, field: "record", "a delete carries no record")
        }
    }

    /// The `fieldTimes` of a change: one RFC 3339 time per field of `record`, none later than
    /// the change's `updatedAt` as sent; clamped with it.
    static func fieldTimes(_ value: JSONValue?, record: [String: JSONValue], sentAt: Date, updatedAt: Date) throws(ChangeRejection) -> [String: Date] {
        guard let value, value != .null else { return [:] }
        guard case .object(let entries) = value else {
            throw ChangeRejection(.invalidField, field: "fieldTimes", "fieldTimes must be an object of field names and RFC 3339 times")
        }
        var times: [String: Date] = [:]
        for (field, time) in entries.sorted(by: { $0.key < $1.key }) {
            let name = "fieldTimes.\(TextRules.quoted(field))"
            guard record[field] != nil else {
                throw ChangeRejection(.invalidField, field: name, "\(name) names a field the record does not carry")
            }
            guard case .string(let text) = time, let date = WireTime.parse(text, years: LocalDate.recordYears) else {
                throw ChangeRejection(
                    .invalidField, field: name, "\(name) must be an RFC 3339 timestamp with an offset in years \(LocalDate.recordYears.lowerBound)–\(LocalDate.recordYears.upperBound)")
            }
            guard WireTime.milliseconds(date) <= WireTime.milliseconds(sentAt) else {
                throw ChangeRejection(.invalidField, field: name, "\(name) must not be later than updatedAt")
            }
            times[field] = min(date, updatedAt)
        }
        return times
    }
}
