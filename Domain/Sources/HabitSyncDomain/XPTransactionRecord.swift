import Foundation

/// An `xpTransactions` ledger entry. Append-only: a reversal is a new negative entry.
public struct XPTransactionRecord: Sendable, Equatable {
    public var amount: Int
    public var reason: String
    public var timestamp: Date
    public var date: LocalDate?

    public init(_ fields: [String: JSONValue], context: ValidationContext) throws(ChangeRejection) {
        var reader = FieldReader(fields, context: context)
        self = Self.unread
        try Self.declared.read(into: &self, &reader)
        try reader.finish()
    }

    /// What reading starts from; every required field is read over it or the read fails.
    private static let unread = XPTransactionRecord(amount: 0, reason: "", timestamp: Date(timeIntervalSince1970: 0), date: nil)

    private init(amount: Int, reason: String, timestamp: Date, date: LocalDate?) {
        self.amount = amount
        self.reason = reason
        self.timestamp = timestamp
        self.date = date
    }
}

extension XPTransactionRecord {
    public static let fields = declared.map(\.erased)

    static let declared: [DeclaredField<XPTransactionRecord>] = {
        let declare = RecordFieldDeclarer<XPTransactionRecord>(merge: .appendOnly) { if case .xpTransaction(let x) = $0 { x } else { nil } }
        return [
            declare.field(
                "amount", "amount", .int4,
                read: { x, r throws(ChangeRejection) in
                    x.amount = try r.required("amount", try r.integer("amount", range: -100_000...100_000))
                    if x.amount == 0 { throw r.fail("amount", "must not be 0") }
                }
            ) { .integer($0.amount) },
            declare.field("reason", "reason", .text, read: { x, r throws(ChangeRejection) in x.reason = try r.required("reason", try r.string("reason", length: 1...200)) }) {
                .text($0.reason)
            },
            declare.field(
                "timestamp", "occurred_at", .timestamptz,
                read: { x, r throws(ChangeRejection) in x.timestamp = try r.required("timestamp", try r.timestamp("timestamp", event: true)) }
            ) { .timestamp($0.timestamp) },
            declare.field("date", "date", .date, read: { x, r throws(ChangeRejection) in x.date = try r.localDate("date") }) { .date($0.date) },
        ]
    }()
}
