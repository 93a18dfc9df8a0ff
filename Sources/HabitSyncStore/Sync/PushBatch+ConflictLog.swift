import Foundation
import HabitSyncDomain
import LibPQClient

/// The conflict log: every superseded and rejected change, for support and analysts.
extension PushBatch {
    /// The logged changes, column by column.
    struct ConflictColumns {
        var collection: [String] = []
        var recordID: [String?] = []
        var outcome: [String] = []
        var errorCode: [String?] = []
        var errorField: [String?] = []
        var errorMessage: [String?] = []
        var op: [String?] = []
        var payload: [String] = []
        var incomingUpdatedAt: [Date?] = []
        var incomingUpdatedBy: [String?] = []
        var field: [String?] = []
        var winningUpdatedAt: [Date?] = []
        var winningUpdatedBy: [String?] = []
    }

    /// Entries are numbered per user, after the user's last one (a probe of the primary key;
    /// the push holds the user's lock), not from the identity sequence: a `nextval` would keep
    /// Citus from running the statement on the user's worker alone (`SyncTableSQL`).
    static func insertConflicts(tenant: UUID, user: String, device: String, batch: UUID, _ c: ConflictColumns) -> PGQuery {
        """
        INSERT INTO conflict_log AS w (tenant_id, user_id, id, collection, record_id, outcome, error_code, error_field, error_message, op,
                                       incoming_payload, incoming_updated_at, incoming_updated_by, winning_updated_at, winning_updated_by,
                                       device_id, batch_id, field)
        OVERRIDING SYSTEM VALUE
        SELECT owner.tenant_id, owner.user_id, last.id + c.n, c.collection, c.record_id, c.outcome, c.error_code, c.error_field, c.error_message, c.op,
               c.payload::jsonb, c.incoming_updated_at, c.incoming_updated_by, c.winning_updated_at, c.winning_updated_by, \(device), \(batch), c.field
        FROM unnest(\(c.collection)::text[], \(c.recordID)::text[], \(c.outcome)::text[], \(c.errorCode)::text[], \(c.errorField)::text[],
                    \(c.errorMessage)::text[], \(c.op)::text[], \(c.payload)::text[], \(c.incomingUpdatedAt)::timestamptz[],
                    \(c.incomingUpdatedBy)::text[], \(c.winningUpdatedAt)::timestamptz[], \(c.winningUpdatedBy)::text[], \(c.field)::text[])
             WITH ORDINALITY AS c(collection, record_id, outcome, error_code, error_field, error_message, op, payload, incoming_updated_at,
                                  incoming_updated_by, winning_updated_at, winning_updated_by, field, n)
        CROSS JOIN \(OwnerRow.relation(tenant: tenant, user: user))
        CROSS JOIN (SELECT coalesce(max(id), 0) AS id FROM conflict_log WHERE tenant_id = \(tenant) AND user_id = \(user)) last
        RETURNING w.id
        """
    }

    /// Every superseded and rejected change, with its payload and both LWW keys, and every
    /// field write that lost (`fieldLosses`): one statement. A superseded change of a record
    /// merged field by field is logged by the fields it lost instead, unless a delete beat it;
    /// a field that lost to the same value lost nothing and is not logged.
    func logConflicts() async throws {
        guard let query = conflictLogQuery() else { return }
        try await skippingRefusal(of: "conflict log") {
            try await self.connection.query(query)
        }
    }

    /// The statement `logConflicts` runs, if the batch has anything to log: the fast path sends
    /// it with the push's closing statements (a refusal there rolls the batch back, and the
    /// slow path logs under a savepoint instead).
    func conflictLogQuery() -> PGQuery? {
        let losers = results.compactMap { $0 }.filter { result in
            result.status == .rejected || (result.status == .superseded && !notLoggedWhole.contains(result.index))
        }
        guard !losers.isEmpty || !fieldLosses.isEmpty else { return nil }
        func text(_ index: Int, _ field: String) -> String? {
            guard case .string(let value)? = raw[index][field] else { return nil }
            return TextRules.storable(value)
        }
        func storable(_ text: String?, _ length: Int) -> String? { text.map { TextRules.storable(String($0.unicodeScalars.prefix(length))) } }
        var columns = ConflictColumns()
        for loser in losers {
            columns.collection.append(PushStore.Tally.label(rawCollection(loser.index)))
            columns.recordID.append(storable(loser.id, 200))
            columns.outcome.append(loser.status.rawValue)
            columns.errorCode.append(loser.error?.code.rawValue)
            columns.errorField.append(storable(loser.error?.field, 200))
            columns.errorMessage.append(storable(loser.error?.message, 2000))
            columns.op.append(text(loser.index, "op").flatMap { ChangeOperation(rawValue: $0)?.rawValue })
            columns.payload.append(JSONValue.object(raw[loser.index]).storable.jsonText)
            columns.incomingUpdatedAt.append(accepted[loser.index]?.updatedAt ?? text(loser.index, "updatedAt").flatMap { WireTime.parse($0, years: LocalDate.recordYears) })
            columns.incomingUpdatedBy.append(device)
            columns.winningUpdatedAt.append(loser.winningKey?.updatedAt)
            columns.winningUpdatedBy.append(loser.winningKey?.updatedBy)
            columns.field.append(nil)
        }
        for lost in fieldLosses {
            columns.collection.append(lost.collection.rawValue)
            columns.recordID.append(lost.recordID.uuidString.lowercased())
            columns.outcome.append("superseded")
            columns.errorCode.append(nil)
            columns.errorField.append(nil)
            columns.errorMessage.append(nil)
            columns.op.append("upsert")
            columns.payload.append(JSONValue.object([lost.loss.field: lost.loss.lost.value]).storable.jsonText)
            columns.incomingUpdatedAt.append(lost.loss.lost.at.updatedAt)
            columns.incomingUpdatedBy.append(lost.loss.lost.at.deviceID)
            columns.winningUpdatedAt.append(lost.loss.winner.at.updatedAt)
            columns.winningUpdatedBy.append(lost.loss.winner.at.deviceID)
            columns.field.append(lost.loss.field)
        }
        return Self.insertConflicts(tenant: tenant, user: user, device: device, batch: batchID, columns)
    }
}
