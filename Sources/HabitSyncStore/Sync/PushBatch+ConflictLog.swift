import Foundation
import HabitSyncDomain
import LibPQClient

/// The conflict log: every superseded and rejected change, for support and analysts.
extension PushBatch {
    static let insertConflicts = """
        INSERT INTO conflict_log (tenant_id, user_id, collection, record_id, outcome, error_code, error_field, error_message, op,
                                  incoming_payload, incoming_updated_at, incoming_updated_by, winning_updated_at, winning_updated_by,
                                  device_id, batch_id)
        SELECT $1, $2, c.collection, c.record_id, c.outcome, c.error_code, c.error_field, c.error_message, c.op,
               c.payload::jsonb, c.incoming_updated_at, $3, c.winning_updated_at, c.winning_updated_by, $3, $4
        FROM unnest($5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[],
                    $13::timestamptz[], $14::timestamptz[], $15::text[])
             AS c(collection, record_id, outcome, error_code, error_field, error_message, op, payload, incoming_updated_at,
                  winning_updated_at, winning_updated_by)
        """

    /// Every superseded and rejected change, with its payload and both LWW keys: one statement.
    func logConflicts() async throws {
        let losers = results.compactMap { $0 }.filter { $0.status == .superseded || $0.status == .rejected }
        guard !losers.isEmpty else { return }
        func text(_ index: Int, _ field: String) -> String? {
            guard case .string(let value)? = raw[index][field] else { return nil }
            return TextRules.storable(value)
        }
        func storable(_ text: String?, _ length: Int) -> String? { text.map { TextRules.storable(String($0.unicodeScalars.prefix(length))) } }
        let binds: [PGBind] = [
            tenant.pgBind(), user.pgBind(), device.pgBind(), batchID.pgBind(),
            losers.map { rawCollection($0.index) }.pgBind(),
            losers.map { storable($0.id, 200) }.pgBind(),
            losers.map { $0.status.rawValue }.pgBind(),
            losers.map { $0.error?.code.rawValue }.pgBind(),
            losers.map { storable($0.error?.field, 200) }.pgBind(),
            losers.map { storable($0.error?.message, 2000) }.pgBind(),
            losers.map { text($0.index, "op").flatMap { ChangeOperation(rawValue: $0)?.rawValue } }.pgBind(),
            losers.map { JSONValue.object(raw[$0.index]).storable.jsonText }.pgBind(),
            losers.map { accepted[$0.index]?.updatedAt ?? text($0.index, "updatedAt").flatMap { WireTime.parse($0, years: LocalDate.recordYears) } }.pgBind(),
            losers.map { $0.winningKey?.updatedAt }.pgBind(),
            losers.map { $0.winningKey?.updatedBy }.pgBind(),
        ]
        try await skippingRefusal(of: "conflict log") {
            try await self.connection.query(PGQuery(unsafeSQL: Self.insertConflicts, binds: binds))
        }
    }
}
