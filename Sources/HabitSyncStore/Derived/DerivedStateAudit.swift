import Foundation
import HabitSyncDomain
import LibPQClient

/// Checks a user's incrementally maintained derived state against a recompute from scratch,
/// changing nothing: under the user's lock, the incremental recompute a push would run, then
/// the full one, each followed by a snapshot, and the transaction rolled back. The property
/// test runs it after every random edit of long histories.
public struct DerivedStateAudit: Sendable {
    /// What the derived state is, as devices and the ledger see it.
    public struct Snapshot: Sendable, Equatable, CustomStringConvertible {
        /// globalStreak, userProgress, usageStreak: their wire records.
        public var records: [String: String]
        /// The server's net daily-completion award per date, where it is not zero.
        public var netAwards: [String: Int]
        /// The ledger's total as the triggers keep it, and as its rows sum.
        public var runningLedgerSum: Int
        public var ledgerSum: Int

        public var description: String {
            "records \(records.sorted { $0.key < $1.key }), ledger \(runningLedgerSum)/\(ledgerSum), awards \(netAwards.sorted { $0.key < $1.key })"
        }
    }

    public let pool: PGPool

    public init(pool: PGPool) {
        self.pool = pool
    }

    private struct RolledBack: Error {
        let incremental: Snapshot
        let full: Snapshot
    }

    /// The transaction's body returned instead of throwing `RolledBack`: a bug of this file.
    public struct NotRolledBack: Error, Sendable {}

    public func compare(tenant: UUID, user: String, now: Date = Date()) async throws -> (incremental: Snapshot, full: Snapshot) {
        do {
            try await pool.withTransaction { connection in
                try await RequestScope.set(on: connection, tenantID: tenant, userID: user)
                let row = try await PushStore.lockLiveUser(connection, tenant: tenant, user: user).user
                let counter = try row.decode("change_counter", as: Int64.self)
                var writer = DerivedStateWriter(
                    connection: connection, tenant: tenant, user: user,
                    derivedRecordID: try row.decode("derived_record_id", as: UUID.self), now: now)
                let next = try await writer.recompute(nextVersion: counter + 1)
                let incremental = try await Self.snapshot(connection, tenant: tenant, user: user)
                writer.full = true
                _ = try await writer.recompute(nextVersion: next)
                throw RolledBack(incremental: incremental, full: try await Self.snapshot(connection, tenant: tenant, user: user))
            }
        } catch let result as RolledBack {
            return (result.incremental, result.full)
        }
        // The body ends by throwing on every path that completes; an error, not a trap, if not.
        throw NotRolledBack()
    }

    static func snapshot(_ connection: PGConnection, tenant: UUID, user: String) async throws -> Snapshot {
        var records: [String: String] = [:]
        for row in try await connection.query(DerivedStateQueries.derivedWireRecords(tenant: tenant, user: user)).rows {
            records[try row.decode("kind", as: String.self)] = try row.decode("record", as: String.self)
        }
        var awards: [String: Int] = [:]
        for row in try await connection.query(DerivedStateQueries.allNetAwards(tenant: tenant, user: user)).rows {
            awards[try row.decode("date", as: String.self)] = try row.decode("amount", as: Int.self)
        }
        let running = try await connection.query(DerivedStateQueries.context(tenant: tenant, user: user)).single()
        let summed = try await connection.query(DerivedStateQueries.ledgerSum(tenant: tenant, user: user)).single()
        return Snapshot(records: records, netAwards: awards, runningLedgerSum: try running.decode("xp_ledger_sum"), ledgerSum: try summed.decode("total"))
    }
}
