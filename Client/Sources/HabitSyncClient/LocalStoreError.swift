/// What the local store refuses, as values the app can show.
public enum LocalStoreError: Error, Sendable, Equatable {
    /// Derived collections (globalStreak, userProgress, usageStreak) are computed by the server.
    case derivedCollection
    /// Append-only and insert-once records cannot change or be deleted once saved (unless the
    /// server refused them: a failed one may be corrected).
    case immutableRecord
    /// The store's file belongs to another signed-in account.
    case otherAccount
    /// A row of the store does not read back (a newer app's store, or a damaged file).
    case corruptRow
}
