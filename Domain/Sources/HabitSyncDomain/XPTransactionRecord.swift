import Foundation

/// An `xpTransactions` ledger entry. Append-only: a reversal is a new negative entry.
public struct XPTransactionRecord: Sendable, Equatable {
    public var amount: Int
    public var reason: String
    public var timestamp: Date
    public var date: LocalDate?

    public init(_ fields: [String: JSONValue], context: ValidationContext) throws(ChangeRejection) {
        var reader = FieldReader(fields, context: context)
        amount = try reader.required("amount", try reader.integer("amount", range: -100_000...100_000))
        if amount == 0 { throw reader.fail("amount", "must not be 0") }
        reason = try reader.required("reason", try reader.string("reason", length: 1...200))
        timestamp = try reader.required("timestamp", try reader.timestamp("timestamp", event: true))
        date = try reader.localDate("date")
        try reader.finish()
    }
}

extension XPTransactionRecord {
    public static let fields: [RecordField] = {
        let declare = RecordFieldDeclarer<XPTransactionRecord>(merge: .appendOnly) { if case .xpTransaction(let x) = $0 { x } else { nil } }
        return [
            declare.field("amount", "amount", .int4) { .integer($0.amount) },
            declare.field("reason", "reason", .text) { .text($0.reason) },
            declare.field("timestamp", "occurred_at", .timestamptz) { .timestamp($0.timestamp) },
            declare.field("date", "date", .date) { .date($0.date) },
        ]
    }()
}
