import Foundation
import LibPQClient

/// The row-level security context of one transaction: the tenant and, for per-user work, the
/// user. Set with `set_config(…, true)`, so it ends with the transaction and a pooled
/// connection never carries it into the next request.
public enum RequestScope {
    static func setQuery(tenantID: UUID, userID: String?) -> PGQuery {
        "SELECT set_config('habitsync.tenant_id', \(tenantID.uuidString.lowercased()), true), set_config('habitsync.user_id', \(userID ?? ""), true)"
    }

    public static func set(on connection: PGConnection, tenantID: UUID, userID: String?) async throws {
        try await connection.query(setQuery(tenantID: tenantID, userID: userID))
    }
}
