import Foundation
import HabitSyncAuth
import LibPQClient

/// Devices' APNs tokens (`device_push_tokens`, migration 0047): registered by the device
/// (`PUT /v1/devices/{id}/push-token`), replaced when it registers again, removed by the
/// device or when APNs says the token is no longer valid, erased with the account.
public struct PushTokenStore: Sendable {
    public let pool: PGPool
    public let statementTimeout: Duration

    public init(pool: PGPool, statementTimeout: Duration = .seconds(5)) {
        self.pool = pool
        self.statementTimeout = statementTimeout
    }

    /// A device token as APNs gives it, in lowercase hex: 8 to 200 bytes (Apple's are 32 today
    /// and may grow), the table's check.
    public static func checkedToken(_ text: String) -> String? {
        let token = text.lowercased()
        guard (16...400).contains(token.utf8.count), token.utf8.count % 2 == 0,
            token.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) })
        else { return nil }
        return token
    }

    /// A new token, or the same: a device that registers again is not woken for what it missed
    /// before (it syncs as it opens).
    static func upsert(tenant: UUID, user: String, device: String, token: String) -> PGQuery {
        """
        INSERT INTO device_push_tokens (tenant_id, user_id, device_id, token) VALUES (\(tenant), \(user), \(device), \(token))
        ON CONFLICT (tenant_id, user_id, device_id) DO UPDATE SET token = EXCLUDED.token, updated_at = EXCLUDED.updated_at, wake_due = false
        """
    }

    static func delete(tenant: UUID, user: String, device: String) -> PGQuery {
        "DELETE FROM device_push_tokens WHERE tenant_id = \(tenant) AND user_id = \(user) AND device_id = \(device)"
    }

    /// Registers `token` for the caller's `device` (an erased account is refused, and nothing
    /// stored: `StoreError.erasedAccount`).
    public func register(identity: VerifiedIdentity, device: String, token: String) async throws {
        let scope = try RequestScope.settings(tenantID: identity.tenantID, userID: identity.userID)
        try await pool.withTransaction(statementTimeout: statementTimeout, localSettings: scope) { connection in
            // The user's row first (created on first use; the token's foreign key needs it).
            _ = try await PushStore.lockLiveUser(connection, tenant: identity.tenantID, user: identity.userID)
            try await connection.query(Self.upsert(tenant: identity.tenantID, user: identity.userID, device: device, token: token))
        }
    }

    /// True when the device had a token.
    public func remove(identity: VerifiedIdentity, device: String) async throws -> Bool {
        let scope = try RequestScope.settings(tenantID: identity.tenantID, userID: identity.userID)
        return try await pool.withTransaction(statementTimeout: statementTimeout, localSettings: scope) { connection in
            try await connection.query(Self.delete(tenant: identity.tenantID, user: identity.userID, device: device)).affectedRows == 1
        }
    }
}
