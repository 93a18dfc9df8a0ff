/// What the local store refuses, as values the app can show.
public enum LocalStoreError: Error, Sendable, Equatable {
    /// Derived collections (globalStreak, userProgress, usageStreak) are computed by the server.
    case derivedCollection
    /// Append-only and insert-once records cannot change or be deleted once saved.
    case immutableRecord
    /// A row of the store does not read back (a newer app's store, or a damaged file).
    case corruptRow
}
