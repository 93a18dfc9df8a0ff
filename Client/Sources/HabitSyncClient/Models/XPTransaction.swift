import Foundation
import HabitSyncDomain

/// An `xpTransactions` record: append-only; reverse one with a new negative transaction.
public struct XPTransaction: WritableModel {
    public static let collection = SyncCollection.xpTransactions

    /// Whole, not 0, at most 100,000 either way.
    public var amount: Int
    public var reason: String
    public var timestamp: Date
    /// The day an award is for.
    public var date: LocalDate?

    public init(amount: Int, reason: String, timestamp: Date, date: LocalDate? = nil) {
        self.amount = amount
        self.reason = reason
        self.timestamp = timestamp
        self.date = date
    }
}
