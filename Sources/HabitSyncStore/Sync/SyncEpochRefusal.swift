import HabitSyncDomain
import LibPQClient

/// A request from another timeline of the server (`EpochCheck`): nothing of it was applied or
/// read, and the answer tells the device what to do and which epoch to adopt.
public struct SyncEpochRefusal: Error, Sendable, Equatable {
    public let verdict: EpochCheck.Verdict
    /// The epoch the device syncs in from now on.
    public let epoch: SyncEpoch?

    /// Throws unless the request is from the current timeline.
    static func check(device: SyncEpoch?, seenVersion: Int64?, writes: Bool = false, server: EpochCheck.ServerState) throws(SyncEpochRefusal) {
        if let verdict = EpochCheck.verdict(device: device, seenVersion: seenVersion, writes: writes, server: server) {
            throw SyncEpochRefusal(verdict: verdict, epoch: server.epoch)
        }
    }

    /// The epoch columns of a `users` row (`account_epoch`, `database_epoch`,
    /// `restored_through`, `change_counter`, `account_restarted`).
    static func serverState(_ row: PGRow) throws -> EpochCheck.ServerState {
        EpochCheck.ServerState(
            database: try row.decode("database_epoch", as: String.self), account: try row.decode("account_epoch", as: String.self),
            restoredThrough: try row.decode("restored_through", as: Int64.self), counter: try row.decode("change_counter", as: Int64.self),
            accountRestarted: try row.decode("account_restarted", as: Bool.self))
    }

    /// The database's epoch, for a user without a row.
    static let databaseEpoch: PGQuery = "SELECT habitsync_database_epoch() AS epoch"

    static func serverStateWithoutUser(_ connection: PGConnection) async throws -> EpochCheck.ServerState {
        EpochCheck.ServerState(
            database: try await connection.query(databaseEpoch).single().decode("epoch", as: String.self),
            account: nil, restoredThrough: 0, counter: 0)
    }
}
