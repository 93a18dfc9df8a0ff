import Foundation
import HabitSyncDomain
import LibPQClient

/// A user's account as a whole: its export (`AccountStore+Export.swift`) and its erasure, and a
/// tenant's erasure. The deleting is done by `habitsync_erase` (migration 0013), which finds
/// every table holding per-user rows in the catalog when it runs.
public struct AccountStore: Sendable {
    public let pool: PGPool
    /// For the erasure's statements: a large account takes longer than a push.
    public let erasureStatementTimeout: Duration
    public let statementTimeout: Duration
    /// Records per page of an export: what the export holds in memory at once.
    public let exportPageSize: Int

    public init(pool: PGPool, statementTimeout: Duration = .seconds(5), erasureStatementTimeout: Duration = .seconds(300), exportPageSize: Int = 1000) {
        self.pool = pool
        self.statementTimeout = statementTimeout
        self.erasureStatementTimeout = erasureStatementTimeout
        self.exportPageSize = max(1, exportPageSize)
    }

    static func markErased(tenant: UUID, user: String) -> PGQuery {
        "SELECT habitsync_mark_user_erased(\(tenant), \(user))"
    }

    /// Waits for the user's pushes in progress (they hold this lock) and keeps new ones out
    /// until the erasure commits.
    static func lockUserRow(tenant: UUID, user: String) -> PGQuery {
        "SELECT change_counter FROM users WHERE tenant_id = \(tenant) AND user_id = \(user) FOR UPDATE"
    }

    static func erase(tenant: UUID, user: String?, dryRun: Bool) -> PGQuery {
        "SELECT table_name, row_count FROM habitsync_erase(\(tenant), \(user), \(dryRun))"
    }

    static func devices(tenant: UUID, user: String) -> PGQuery {
        "SELECT device_id FROM devices WHERE tenant_id = \(tenant) AND user_id = \(user)"
    }

    /// The metering's hashes of the user and the devices it pushed from
    /// (`tenant_active_members`, migration 0045): the user's and each device's member.
    static func forgetActiveMembers(tenant: UUID, user: String, devices: [String]) -> PGQuery {
        """
        DELETE FROM tenant_active_members WHERE tenant_id = \(tenant) AND member IN (
            SELECT habitsync_member_hash(\(tenant), \(user))
            UNION ALL SELECT habitsync_member_hash(\(tenant), \(user) || chr(31) || d) FROM unnest(\(devices)::text[]) AS d)
        """
    }

    static func allowAgain(tenant: UUID, user: String) -> PGQuery {
        "SELECT habitsync_allow_user_again(\(tenant), \(user)) AS removed"
    }

    /// Erases every row of the user, in steps that each commit: the marker first (from then on
    /// the user's pushes, pulls and imports are refused), the metering's hashes of the user,
    /// then every row, under the user's lock, in one transaction. Running it again finishes an erasure a failure
    /// interrupted; a dry run changes nothing and counts what would go.
    ///
    /// The second transaction runs as the login role (`.login`): `habitsync_erase` deletes
    /// from tables the request role may not touch (archived months, append-only logs). On one
    /// server its `SECURITY DEFINER` covers that; Citus runs its deletes on the workers as the
    /// transaction's role. The scope still limits it to the caller: the function refuses any
    /// other user, and row-level security is forced on the owner too.
    public func eraseUser(tenant: UUID, user: String, dryRun: Bool = false) async throws -> ErasureReport {
        if !dryRun {
            try await pool.withTransaction(statementTimeout: statementTimeout) { connection in
                try await RequestScope.set(on: connection, tenantID: tenant, userID: user)
                try await connection.query(Self.markErased(tenant: tenant, user: user))
            }
            // The metering's trace of them (hashed, kept two days), in a transaction of its own:
            // on Citus it is a reference table, written on every node, and the deletion below
            // stays the user's node's alone. (Not in the report: it holds no record of theirs.)
            try await pool.withTransaction(statementTimeout: statementTimeout) { connection in
                try await RequestScope.set(on: connection, tenantID: tenant, userID: user)
                let devices = try await connection.query(Self.devices(tenant: tenant, user: user)).rows.map { try $0.decode("device_id", as: String.self) }
                try await connection.query(Self.forgetActiveMembers(tenant: tenant, user: user, devices: devices))
            }
        }
        return try await pool.withTransaction(readOnly: dryRun, statementTimeout: erasureStatementTimeout, role: .login) { connection in
            try await RequestScope.set(on: connection, tenantID: tenant, userID: user)
            guard !dryRun else { return try await Self.report(connection.query(Self.erase(tenant: tenant, user: user, dryRun: true)), dryRun: true) }
            let counter = try await connection.query(Self.lockUserRow(tenant: tenant, user: user)).rows.first?.decode("change_counter", as: Int64.self)
            let report = try await Self.report(connection.query(Self.erase(tenant: tenant, user: user, dryRun: false)), dryRun: false)
            if let counter {
                // The user's open event streams, on every replica, hear it at commit: their
                // devices pull, get `410 account_erased` and stop syncing.
                try await connection.query(PushStore.notifyChange(ChangeNotice(tenantID: tenant, userID: user, serverVersion: counter + 1, deviceID: ServerDevice.name, collections: [])))
            }
            return report
        }
    }

    /// Erases every user of the tenant, its keys and the tenant itself, in one transaction.
    /// Tokens of the tenant stop verifying with its keys.
    public func eraseTenant(_ tenant: UUID, dryRun: Bool = false) async throws -> ErasureReport {
        try await pool.withTransaction(readOnly: dryRun, statementTimeout: erasureStatementTimeout) { connection in
            try await RequestScope.set(on: connection, tenantID: tenant, userID: nil)
            // On Citus the tenant's rows span every shard, and the reference tables (tenants,
            // keys) cannot be changed after a parallel multi-shard delete in the same
            // transaction. Elsewhere this only sets an unused placeholder.
            try await connection.simpleQuery(unsafeSQL: "SET LOCAL citus.multi_shard_modify_mode TO 'sequential'")
            return try await Self.report(connection.query(Self.erase(tenant: tenant, user: nil, dryRun: dryRun)), dryRun: dryRun)
        }
    }

    /// Forgets an erasure so that the user can start over (an empty account). True when the
    /// user was marked erased. Admins only: the request role may not run it.
    public func allowAgain(tenant: UUID, user: String) async throws -> Bool {
        try await pool.withTransaction(statementTimeout: statementTimeout) { connection in
            try await RequestScope.set(on: connection, tenantID: tenant, userID: user)
            return try await connection.query(Self.allowAgain(tenant: tenant, user: user)).single().decode("removed", as: Bool.self)
        }
    }

    private static func report(_ result: PGResult, dryRun: Bool) throws -> ErasureReport {
        var rows: [String: Int64] = [:]
        for row in result.rows {
            rows[try row.decode("table_name", as: String.self)] = try row.decode("row_count", as: Int64.self)
        }
        return ErasureReport(rows: rows, dryRun: dryRun)
    }
}
