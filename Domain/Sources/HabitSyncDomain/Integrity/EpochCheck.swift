/// Whether a device's request belongs to the server's current timeline, and if not, what the
/// device must do (docs/protocol.md, "Epochs"). Pure: the store reads the user's row and asks.
public enum EpochCheck {
    /// The server's side, as one read under the request's snapshot or lock.
    public struct ServerState: Sendable, Equatable {
        /// The database's current epoch.
        public var database: String
        /// The user's account epoch; nil when the user has no row (nothing stored, or erased
        /// and allowed again).
        public var account: String?
        /// The user's counter when the database epoch was last rotated: what the restored
        /// server holds of the user (0 for a user without a row).
        public var restoredThrough: Int64
        /// The user's newest `serverVersion` (0 without a row).
        public var counter: Int64
        /// The account was erased and allowed again: only devices that name its epoch write
        /// into it.
        public var accountRestarted: Bool

        public init(database: String, account: String?, restoredThrough: Int64, counter: Int64, accountRestarted: Bool = false) {
            self.database = database
            self.account = account
            self.restoredThrough = restoredThrough
            self.counter = counter
            self.accountRestarted = accountRestarted
        }

        /// The epoch a device adopts from this answer.
        public var epoch: SyncEpoch? { SyncEpoch(database: database, account: account) }
    }

    /// What a device from another history must do; no verdict (nil) when it is current.
    public enum Verdict: Sendable, Equatable {
        /// The server holds the user's records up to `highWaterMark` only (a backup was
        /// restored, or a cursor is ahead of the counter): the device pushes again every record
        /// it holds above it, with its outbox, then pulls from scratch.
        case resetRequired(highWaterMark: Int64)
        /// The account the device synced with was erased and has started over: the device
        /// discards everything it holds of the old account and pushes none of it.
        case accountRestarted
    }

    /// - Parameters:
    ///   - device: the epoch the request carries; nil from a device that never synced, or an
    ///     older client (then only `seenVersion` is checked).
    ///   - seenVersion: the newest version the device says it has (a cursor, `Last-Event-ID`);
    ///     nil for a push.
    ///   - writes: the request stores what it carries (a push). Into a restarted account only
    ///     a device that names its epoch writes: a push without one may come from the erased
    ///     account (an app from before epochs) and is answered `accountRestarted`. A device
    ///     that never synced learns the epoch from that answer (or from a pull) and pushes again.
    /// - Returns: nil when the request belongs to the server's current history.
    public static func verdict(device: SyncEpoch?, seenVersion: Int64?, writes: Bool = false, server: ServerState) -> Verdict? {
        if let device {
            if device.database != server.database {
                return .resetRequired(highWaterMark: server.account == nil ? 0 : min(server.restoredThrough, server.counter))
            }
            // An account epoch the server did not issue: the account the device synced with is
            // gone. Erased and allowed again, or (the server cannot tell the two apart, since an
            // erasure keeps no user id) a restore to before the account existed that skipped
            // `epoch rotate`.
            if let account = device.account, account != server.account { return .accountRestarted }
            if device.account == nil, writes, server.accountRestarted { return .accountRestarted }
        } else if writes, server.accountRestarted {
            return .accountRestarted
        }
        if let seenVersion, seenVersion > server.counter { return .resetRequired(highWaterMark: server.counter) }
        return nil
    }
}
