import Foundation
import HabitSyncDomain

/// A record type of one collection, with the wire's field names. Codable through `ModelCoding`
/// (timestamps as RFC 3339, dates as `yyyy-MM-dd`); an optional left nil is left out, so the
/// server's default applies.
public protocol SyncModel: Codable, Sendable, Equatable {
    static var collection: SyncCollection { get }
}

/// A record the device writes (every collection but the derived ones).
public protocol WritableModel: SyncModel {}

/// A record the device may delete: the last-writer-wins collections (a tombstone).
public protocol DeletableModel: WritableModel {}

/// A record the server computes (`globalStreak`, `userProgress`, `usageStreak`): read-only.
public protocol DerivedModel: SyncModel {}
