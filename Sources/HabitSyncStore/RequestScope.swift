import Foundation
import LibPQClient

/// The row-level security context of one transaction: the tenant and, for per-user work, the
/// user. Set with `set_config(…, true)`, so it ends with the transaction and a pooled
/// connection never carries it into the next request.
///
/// It fails closed (migration 0008): a user of "" matches no row, and tenant-wide work
/// (`userID: nil`) says so explicitly with `habitsync.scope = 'tenant'`.
public enum RequestScope {
    /// A request was about to run for an empty user id, which no verified token carries.
    public struct EmptyUser: Error, Sendable {}

    static func setQuery(tenantID: UUID, userID: String?) -> PGQuery {
        """
        SELECT set_config('habitsync.tenant_id', \(tenantID.uuidString.lowercased()), true),
               set_config('habitsync.user_id', \(userID ?? ""), true),
               set_config('habitsync.scope', \(userID == nil ? "tenant" : "user"), true)
        """
    }

    public static func set(on connection: PGConnection, tenantID: UUID, userID: String?) async throws {
        if let userID, userID.isEmpty { throw EmptyUser() }
        try await connection.query(setQuery(tenantID: tenantID, userID: userID))
    }
}
