import Foundation
import HabitSyncAuth
import HabitSyncDomain
import HabitSyncStore
import LibPQClient
import SeededRandom
import SyncTestSupport
import TestSupport
import Testing

/// The merge promise of `docs/protocol.md` ("Merging fields": the order of arrival never
/// matters), held by what PostgreSQL stores: random histories of field edits (some fields, some
/// with times of their own, look-alike device ids and values), deletes, revivals, whole-record
/// writes of an older app, a write sent again in a new batch and a batch replayed, pushed
/// through the real store in **every** order of their arrival. Every order must leave the same
/// row, compared column by column with each field's key (from `field_times`), and that row must
/// be what the pure rule (`FieldMergedRecord`) says.
///
/// `FieldMergedRecordTests` proves the pure rule alone; before this test a tombstone's merged
/// fields were settled in Swift and never written (issue 44: an edit older than a delete that
/// arrived while the record was deleted was lost when a later edit brought the record back),
/// which no test of the rule could see.
@Suite struct ArrivalOrderTests {
    static let devices = ["phone-3", "Watch-7", "caf\u{E9}", "cafe\u{301}"]
    /// Fields with no rule across fields (so no order can make a merged record invalid), and
    /// values for each: nil is sent as null (the field's default).
    static let fields: [(name: String, values: [String?])] = [
        ("name", ["a", "b", "caf\u{E9}", "cafe\u{301}"]),
        ("icon", ["i0", "i1", nil]),
        ("habitDescription", ["", "x"]),
        ("color", [nil, "#FF0000"]),
        ("goalUnit", ["pages", "km"]),
    ]

    /// One write of a history: its own batch.
    struct Write: CustomStringConvertible {
        let device: String
        let change: JSON
        let protocolVersion: Int?

        var description: String {
            let op = change["op"] as? String ?? "?"
            let record = (change["record"] as? JSON).map { ($0.keys.sorted()).joined(separator: "+") } ?? ""
            return "\(device) \(op) \(change["updatedAt"] as? String ?? "") \(record) \(change["fieldTimes"] as? JSON ?? [:])"
        }
    }

    static let created = Wire.at(-3600)
    static func createHabit(_ id: UUID) -> JSON {
        var record = Wire.habit(name: "del")
        record["icon"] = "i0"
        record["createdAt"] = created
        return Wire.change("habits", id, at: created, record: record)
    }

    /// A random history of `count` writes to `habit`: edits of one or two fields (some with a
    /// time of their own), deletes, and whole records of an app from before field merging.
    static func history(_ habit: UUID, count: Int, using generator: inout SeededGenerator) -> [Write] {
        (0..<count).map { _ in
            let device = devices.randomElement(using: &generator) ?? "phone-3"
            // Few instants: equal times (ties broken by device, then by value) are common.
            let seconds = Double(Int.random(in: 0..<4, using: &generator) * 60)
            let at = Wire.at(seconds)
            switch Int.random(in: 0..<8, using: &generator) {
            case 0, 1:
                return Write(device: device, change: Wire.change("habits", habit, at: at, record: nil), protocolVersion: nil)
            case 2:
                // An older app: a whole record as it knows it (no icon, description, colour).
                let name = fields[0].values.randomElement(using: &generator) ?? "a"
                return Write(device: device, change: Wire.change("habits", habit, at: at, record: Wire.habit(name: name ?? "a")), protocolVersion: nil)
            default:
                var record: JSON = [:]
                var times: JSON = [:]
                for field in fields.shuffled(using: &generator).prefix(Int.random(in: 1...2, using: &generator)) {
                    let value = field.values.randomElement(using: &generator) ?? nil
                    record[field.name] = value.map { $0 as Any } ?? NSNull()
                    if Bool.random(using: &generator) { times[field.name] = Wire.at(seconds - Double(Int.random(in: 1...90, using: &generator))) }
                }
                var change = Wire.change("habits", habit, at: at, record: record)
                if !times.isEmpty { change["fieldTimes"] = times }
                return Write(device: device, change: change, protocolVersion: 2)
            }
        }
    }

    /// A field's stored value (as JSON text) and key.
    struct StoredField: Equatable, CustomStringConvertible {
        let value: String
        let key: String
        var description: String { "\(value)@\(key)" }
    }

    /// A stored habit: deleted or not, the record's key, every field with its key.
    struct StoredHabit: Equatable, CustomStringConvertible {
        let deleted: Bool
        let key: String
        let fields: [String: StoredField]
        var description: String { "deleted \(deleted) key \(key) \(fields.keys.sorted().map { "\($0)=\(fields[$0]!)" }.joined(separator: " "))" }
    }

    static func key(_ key: LWWKey) -> String { key == .never ? "never" : "\(WireTime.format(key.updatedAt))/\(Array(key.deviceID.utf8))" }

    /// The row as PostgreSQL holds it, columns rendered as the pull renders a record (a
    /// tombstone too), each field's key from `field_times` or the record's own. (`ROW(h.*)`:
    /// on Citus the row has its shard's type, which the function does not take.)
    static func stored(_ world: SyncWorld, user: String, habit: UUID) async throws -> StoredHabit? {
        try await world.database.withPool(size: 1) { pool in
            try await pool.withConnection { connection in
                guard
                    let row = try await connection.query(
                        """
                        SELECT deleted_at IS NOT NULL AS deleted, updated_at, updated_by, habitsync_habit_record_json(ROW(h.*)::habits)::text AS record,
                               field_times::text AS field_times
                        FROM habits h WHERE tenant_id = \(world.tenant) AND user_id = \(user) AND id = \(habit)
                        """
                    ).rows.first
                else { return nil }
                let recordKey = LWWKey(updatedAt: try row.decode("updated_at"), deviceID: try row.decode("updated_by"))
                guard case .object(let record) = try JSONParser.parse(bytes: Array(try row.decode("record", as: String.self).utf8)) else { return nil }
                var times: [String: JSONValue] = [:]
                if let text = try row.decodeIfPresent("field_times", as: String.self), case .object(let parsed) = try JSONParser.parse(bytes: Array(text.utf8)) {
                    times = parsed
                }
                var fields: [String: StoredField] = [:]
                for (name, value) in record {
                    var fieldKey = recordKey
                    if case .array(let pair)? = times[name], case .string(let time)? = pair.first, case .string(let device)? = pair.last, let date = WireTime.parse(time) {
                        fieldKey = LWWKey(updatedAt: date, deviceID: device)
                    } else if times[name] == .null {
                        fieldKey = .never
                    }
                    fields[name] = StoredField(value: value.jsonText, key: key(fieldKey))
                }
                return StoredHabit(deleted: try row.decode("deleted"), key: key(recordKey), fields: fields)
            }
        }
    }

    /// What `FieldMergedRecord` says the writes, arriving in this order, leave.
    static func expected(_ writes: [Write], habit: UUID) throws -> StoredHabit? {
        let context = ValidationContext.standalone(now: Wire.base.addingTimeInterval(86_400))
        let validate: FieldMergedRecord.Validate = { fields throws(ChangeRejection) in
            CanonicalFields.of(try ValidatedRecord.validate(.habits, fields, context: context)) ?? [:]
        }
        var record: FieldMergedRecord?
        for (index, write) in ([Write(device: "phone-3", change: createHabit(habit), protocolVersion: nil)] + writes).enumerated() {
            guard let time = write.change["updatedAt"] as? String, let at = WireTime.parse(time) else { return nil }
            let key = LWWKey(updatedAt: at, deviceID: write.device)
            var fields: [String: JSONValue]?
            if let sent = write.change["record"] as? JSON {
                guard case .object(let parsed) = try JSONParser.parse(bytes: Array(try JSONSerialization.data(withJSONObject: sent))) else { return nil }
                fields = parsed
            }
            var times: [String: LWWKey] = [:]
            for (field, value) in write.change["fieldTimes"] as? JSON ?? [:] {
                if let text = value as? String, let date = WireTime.parse(text) { times[field] = LWWKey(updatedAt: date, deviceID: write.device) }
            }
            record = FieldMergedRecord.settle(record, [.init(index: index, key: key, fields: fields, times: times)], validate: validate).record
        }
        guard let record else { return nil }
        return StoredHabit(
            deleted: record.deleted, key: key(record.key),
            fields: record.fields.fields.mapValues { StoredField(value: $0.value.jsonText, key: key($0.at)) })
    }

    @Test(arguments: 0..<24)
    func everyArrivalOrderStoresTheSameRecordWithTheSameFieldKeys(seed: Int) async throws {
        var generator = SeededGenerator(seed: UInt64(44_000 + seed))
        let world = try await SyncWorld.make()
        try await world.database.withPool(size: 1, role: "habitsync_app") { pool in
            let store = PushStore(pool: pool, statementTimeout: .seconds(60))
            let habit = UUID()
            let writes = Self.history(habit, count: Int.random(in: 3...4, using: &generator), using: &generator)
            // One of them is sent again later in a new batch (an app that retried after losing
            // the answer), and one batch is replayed byte for byte.
            let resent = Int.random(in: 0..<writes.count, using: &generator)
            let replayed = Int.random(in: 0..<writes.count, using: &generator)
            var reference: StoredHabit?
            for (order, arrival) in ArrivalOrder.permutations(Array(writes.indices)).enumerated() {
                let user = "order-\(order)"
                let identity = VerifiedIdentity.trusted(tenantID: world.tenant, userID: user)
                let created = try await StorePush.results([Self.createHabit(habit)], through: store, as: identity, device: "phone-3")
                #expect(created.first?["status"] as? String == "applied")
                var sequence = arrival
                sequence.insert(resent, at: Int.random(in: (sequence.firstIndex(of: resent) ?? 0) + 1...sequence.count, using: &generator))
                var batches: [Int: UUID] = [:]
                for (position, index) in sequence.enumerated() {
                    let write = writes[index]
                    // The re-sent write's second arrival goes in a batch of its own.
                    let batchID = position > 0 && sequence[..<position].contains(index) ? UUID() : batches[index, default: UUID()]
                    batches[index] = batchID
                    let first = try await StorePush.response(
                        [write.change], through: store, as: identity, device: write.device, protocolVersion: write.protocolVersion, batchID: batchID)
                    let results = first["results"] as? [JSON] ?? []
                    #expect(results.count == 1 && results.first?["status"] as? String != "rejected", "\(write): \(results)")
                    if index == replayed {
                        let again = try await StorePush.response(
                            [write.change], through: store, as: identity, device: write.device, protocolVersion: write.protocolVersion, batchID: batchID)
                        #expect(NSDictionary(dictionary: again).isEqual(to: first), "a replay answers the first answer")
                    }
                }
                let stored = try await Self.stored(world, user: user, habit: habit)
                let sentInOrder = sequence.map { writes[$0] }
                let model = try Self.expected(sentInOrder, habit: habit)
                #expect(stored == model, "order \(sequence): stored \(String(describing: stored)), the rule says \(String(describing: model)); history \(writes)")
                if let reference {
                    #expect(stored == reference, "order \(sequence) differs from the first order; history \(writes)")
                } else {
                    reference = stored
                }
            }
        }
    }

    /// Issue 44's report as it happened, through HTTP: the habit "del" (icon "i0") created at
    /// 07:00; the phone deletes it at 10:00; the watch's rename made at 09:30 arrives after
    /// the delete (superseded), then its icon change made at 10:30 brings the habit back. The
    /// rename must be in the revived habit, as it is when it arrives before the delete, and
    /// sending it again changes nothing.
    @Test(arguments: [false, true])
    func anEditOlderThanADeleteIsInTheRevivedRecordWhicheverArrivesFirst(renameFirst: Bool) async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let phone = try await world.client(server, user: "ada", device: "phone-3")
            let watch = phone.withDevice("Watch-7")
            let habit = UUID()
            var record = Wire.habit(name: "del")
            record["icon"] = "i0"
            #expect(try await phone.push([Wire.change("habits", habit, at: Wire.at(-3600 * 3), record: record)]).status(0) == "applied")
            let delete = try FieldMergeSyncTests.body([Wire.change("habits", habit, at: Wire.at(0), record: nil)])
            let rename = try FieldMergeSyncTests.body([FieldMergeSyncTests.edit("habits", habit, at: -1800, ["name": "a-older"])])
            let icon = try FieldMergeSyncTests.body([FieldMergeSyncTests.edit("habits", habit, at: 1800, ["icon": "newer"])])
            if renameFirst {
                #expect(try await watch.pushRaw(rename).status(0) == "applied")
                #expect(try await phone.pushRaw(delete).status(0) == "applied")
            } else {
                #expect(try await phone.pushRaw(delete).status(0) == "applied")
                #expect(try await watch.pushRaw(rename).status(0) == "superseded")
            }
            #expect(try await watch.pushRaw(icon).status(0) == "applied")
            let revived = try await FieldMergeSyncTests.record(phone, "habits", habit)
            #expect(revived?["name"] as? String == "a-older")
            #expect(revived?["icon"] as? String == "newer")
            #expect(try await world.count("habits", where: "name = 'a-older' AND icon = 'newer' AND deleted_at IS NULL") == 1, "stored, not only pulled")
            let again = try FieldMergeSyncTests.body([FieldMergeSyncTests.edit("habits", habit, at: -1800, ["name": "a-older"])])
            #expect(try await watch.pushRaw(again).status(0) == "unchanged", "the device's edit is in: sending it again changes nothing")
        }
    }
}
