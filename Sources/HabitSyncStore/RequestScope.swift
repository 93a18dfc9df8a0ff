import Foundation
import LibPQClient

/// The row-level security context of one transaction: the tenant and, for per-user work, the
/// user. Set with `SET LOCAL`, so it ends with the transaction and a pooled connection never
/// carries it into the next request.
///
/// `SET LOCAL` rather than `set_config(…, true)` with binds, because it is the form Citus
/// sends on to the workers (`citus.propagate_set_commands = 'local'`), whose row-level security
/// reads the same settings (deploy/README.md, "Citus"). `SET` takes no parameters, so the values
/// are quoted literals: the tenant is a UUID, the user a token subject that `SubjectRules`
/// validated (no control characters), and a NUL is refused here as well.
///
/// It fails closed (migration 0008): a user of "" matches no row, and tenant-wide work
/// (`userID: nil`) says so explicitly with `habitsync.scope = 'tenant'`.
public enum RequestScope {
    /// A request was about to run for an empty user id, which no verified token carries.
    public struct EmptyUser: Error, Sendable {}
    /// A user id held a NUL, which no verified token carries and a command cannot.
    public struct UnquotableUser: Error, Sendable {}

    static func setStatements(tenantID: UUID, userID: String?) -> [String] {
        [
            "SET LOCAL habitsync.tenant_id = '\(tenantID.uuidString.lowercased())'",
            "SET LOCAL habitsync.user_id = \(PGQuery.quoteLiteral(userID ?? ""))",
            "SET LOCAL habitsync.scope = '\(userID == nil ? "tenant" : "user")'",
        ]
    }

    /// Each command a statement of its own (`PGConnection.commands`): Citus sends a propagated
    /// `SET LOCAL`'s whole text on to the workers.
    public static func set(on connection: PGConnection, tenantID: UUID, userID: String?) async throws {
        try await connection.commands(unsafeSQL: settings(tenantID: tenantID, userID: userID).map(\.command))
    }

    /// The same settings for `PGPool.withTransaction(localSettings:)`, which sends them with
    /// `BEGIN` and the transaction's first statement: the hot paths (push, pull) save a round
    /// trip per request.
    public static func settings(tenantID: UUID, userID: String?) throws -> [PGLocalSetting] {
        if let userID, userID.isEmpty { throw EmptyUser() }
        if let userID, userID.unicodeScalars.contains("\0") { throw UnquotableUser() }
        return [
            PGLocalSetting("habitsync.tenant_id", tenantID.uuidString.lowercased()), PGLocalSetting("habitsync.user_id", userID ?? ""),
            PGLocalSetting("habitsync.scope", userID == nil ? "tenant" : "user"),
        ]
    }

    /// A transaction of `tenant`'s admins (its settings, endpoints, keys): tenant-wide scope.
    static func inTenant<Result>(_ pool: PGPool, _ tenant: UUID, readOnly: Bool = false, _ body: (PGConnection) async throws -> Result) async throws -> Result {
        try await pool.withTransaction(readOnly: readOnly, localSettings: try settings(tenantID: tenant, userID: nil)) { try await body($0) }
    }
}
