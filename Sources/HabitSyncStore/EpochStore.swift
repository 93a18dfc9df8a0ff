import Foundation
import LibPQClient

/// The database's sync epoch (docs/operations.md, "Restoring a backup"): read it, and rotate
/// it after a restore so that devices which synced with the lost timeline push again what the
/// restored database lacks.
public struct EpochStore: Sendable {
    public let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    public struct Current: Sendable, Equatable {
        public let epoch: String
        public let rotatedAt: Date
    }

    public struct Rotation: Sendable, Equatable {
        public let previous: String
        public let current: String
        /// Users whose rows took the new epoch, each with its counter as its high-water mark.
        public let users: Int
    }

    static let current: PGQuery = "SELECT epoch, rotated_at FROM sync_epoch"
    static let lockCurrent: PGQuery = "SELECT epoch FROM sync_epoch FOR UPDATE"
    static let replace: PGQuery = "UPDATE sync_epoch SET epoch = habitsync_new_epoch(), rotated_at = now() RETURNING epoch"
    static let tenantIDs: PGQuery = "SELECT id FROM tenants ORDER BY id"

    /// Every user of the tenant in scope: the new epoch, and the counter as what the restored
    /// database holds.
    static func stampUsers(epoch: String) -> PGQuery {
        "UPDATE users SET database_epoch = \(epoch), restored_through = change_counter"
    }

    public func current() async throws -> Current {
        try await pool.withTransaction(readOnly: true) { connection in
            let row = try await connection.query(Self.current).single()
            return Current(epoch: try row.decode("epoch", as: String.self), rotatedAt: try row.decode("rotated_at", as: Date.self))
        }
    }

    /// A new random epoch for the database and every user, in one transaction. Run it on the
    /// restored database before serving from it.
    public func rotate() async throws -> Rotation {
        try await pool.withTransaction { connection in
            let previous = try await connection.query(Self.lockCurrent).single().decode("epoch", as: String.self)
            let epoch = try await connection.query(Self.replace).single().decode("epoch", as: String.self)
            var users = 0
            for tenant in try await connection.query(Self.tenantIDs).rows {
                try await RequestScope.set(on: connection, tenantID: try tenant.decode("id", as: UUID.self), userID: nil)
                users += try await connection.query(Self.stampUsers(epoch: epoch)).affectedRows ?? 0
            }
            return Rotation(previous: previous, current: epoch, users: users)
        }
    }
}
