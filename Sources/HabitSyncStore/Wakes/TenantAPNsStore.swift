import Foundation
import LibPQClient

/// A tenant's APNs key, as admins set it (`tenant set-apns`, `apns`, `remove-apns`), in the
/// tenant's own row-level security scope. The key itself is never read back for display.
public struct TenantAPNsStore: Sendable {
    public let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    /// What `tenant apns` shows: everything but the key.
    public struct Shown: Sendable, Equatable {
        public let keyID: String
        public let teamID: String
        public let topic: String
        public let environment: String
        public let wakeIntervalSeconds: Int
        public let updatedAt: Date
        /// Devices of the tenant with a token.
        public let devices: Int64
    }

    static func upsert(tenant: UUID, _ settings: APNsSettings) -> PGQuery {
        // The time as a value, not now(): Citus takes only immutable functions in DO UPDATE.
        """
        INSERT INTO tenant_apns (tenant_id, key_id, team_id, topic, environment, signing_key, wake_interval_seconds, updated_at)
        VALUES (\(tenant), \(settings.keyID), \(settings.teamID), \(settings.topic), \(settings.environment.rawValue), \(settings.signingKey),
                \(Int(settings.wakeInterval / .seconds(1))), \(Date()))
        ON CONFLICT (tenant_id) DO UPDATE SET key_id = EXCLUDED.key_id, team_id = EXCLUDED.team_id, topic = EXCLUDED.topic,
            environment = EXCLUDED.environment, signing_key = EXCLUDED.signing_key, wake_interval_seconds = EXCLUDED.wake_interval_seconds,
            updated_at = EXCLUDED.updated_at
        """
    }

    static func select(tenant: UUID) -> PGQuery {
        """
        SELECT key_id, team_id, topic, environment, wake_interval_seconds, updated_at,
               (SELECT count(*) FROM device_push_tokens t WHERE t.tenant_id = \(tenant)) AS devices
        FROM tenant_apns WHERE tenant_id = \(tenant)
        """
    }

    static func delete(tenant: UUID) -> PGQuery { "DELETE FROM tenant_apns WHERE tenant_id = \(tenant)" }

    private func inTenant<Result>(_ tenant: UUID, readOnly: Bool = false, _ body: (PGConnection) async throws -> Result) async throws -> Result {
        try await RequestScope.inTenant(pool, tenant, readOnly: readOnly, body)
    }

    public func set(tenant: UUID, _ settings: APNsSettings) async throws {
        try await inTenant(tenant) { _ = try await $0.query(Self.upsert(tenant: tenant, settings)) }
    }

    /// Nil when the tenant has none.
    public func shown(tenant: UUID) async throws -> Shown? {
        try await inTenant(tenant, readOnly: true) { connection in
            try await connection.query(Self.select(tenant: tenant)).rows.first.map { row in
                Shown(
                    keyID: try row.decode("key_id", as: String.self), teamID: try row.decode("team_id", as: String.self), topic: try row.decode("topic", as: String.self),
                    environment: try row.decode("environment", as: String.self), wakeIntervalSeconds: try row.decode("wake_interval_seconds", as: Int.self),
                    updatedAt: try row.decode("updated_at", as: Date.self), devices: try row.decode("devices", as: Int64.self))
            }
        }
    }

    /// False when the tenant had none. Its devices' tokens stay (a key set again wakes them).
    public func remove(tenant: UUID) async throws -> Bool {
        try await inTenant(tenant) { try await $0.query(Self.delete(tenant: tenant)).affectedRows == 1 }
    }
}
