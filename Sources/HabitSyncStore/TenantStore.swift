import Foundation
import HabitSyncAuth
import LibPQClient

/// A tenant as admins see it.
public struct Tenant: Sendable, Equatable {
    public let id: UUID
    public let name: String
    public let dailyCompletionXP: Int
    public let createdAt: Date
    public let disabled: Bool
    /// Algorithms of the keys that verify tokens now.
    public let activeKeyAlgorithms: [TokenAlgorithm]
}

/// Tenants and their JWT keys. Admin operations run as the schema owner (the registry is not
/// forced under RLS); key lookups for requests run as the request role inside the tenant's
/// RLS context.
public struct TenantStore: Sendable {
    public let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    static func insertTenant(id: UUID, name: String, dailyCompletionXP: Int) -> PGQuery {
        "INSERT INTO tenants (id, name, daily_completion_xp) VALUES (\(id), \(name), \(dailyCompletionXP))"
    }

    static func insertKey(tenantID: UUID, key: TenantKey) -> PGQuery {
        let secret: PGBytes?
        let pem: String?
        switch key.material {
        case .sharedSecret(let bytes): (secret, pem) = (PGBytes(bytes), nil)
        case .publicKeyPEM(let text): (secret, pem) = (nil, text)
        }
        return """
            INSERT INTO tenant_keys (tenant_id, id, algorithm, hs256_secret, public_key_pem)
            VALUES (\(tenantID), \(key.id), \(key.algorithm.rawValue), \(secret), \(pem))
            """
    }

    static func insertErasureKey(tenantID: UUID) -> PGQuery {
        "INSERT INTO erasure_keys (tenant_id) VALUES (\(tenantID))"
    }

    /// Keys that verify tokens now: not retired, or retired with a grace period still running.
    static func selectActiveKeys(tenantID: UUID) -> PGQuery {
        """
        SELECT k.id, k.algorithm, k.hs256_secret, k.public_key_pem
        FROM tenant_keys k JOIN tenants t ON t.id = k.tenant_id
        WHERE k.tenant_id = \(tenantID) AND t.disabled_at IS NULL
          AND (k.retired_at IS NULL OR k.retired_at > now())
        ORDER BY k.created_at DESC
        """
    }

    static let selectTenants: PGQuery = """
        SELECT id, name, daily_completion_xp, created_at, disabled_at IS NOT NULL AS disabled FROM tenants ORDER BY name
        """

    static func selectTenant(_ reference: String) -> PGQuery {
        if let id = UUID(uuidString: reference) {
            return "SELECT id, name, daily_completion_xp, created_at, disabled_at IS NOT NULL AS disabled FROM tenants WHERE id = \(id)"
        }
        return "SELECT id, name, daily_completion_xp, created_at, disabled_at IS NOT NULL AS disabled FROM tenants WHERE name = \(reference)"
    }

    static func retireKeys(tenantID: UUID, grace: TimeInterval) -> PGQuery {
        """
        UPDATE tenant_keys SET retired_at = now() + make_interval(secs => \(grace))
        WHERE tenant_id = \(tenantID) AND (retired_at IS NULL OR retired_at > now() + make_interval(secs => \(grace)))
        """
    }

    /// Creates a tenant with its first key.
    public func create(name: String, key: TenantKey, dailyCompletionXP: Int = 50) async throws -> Tenant {
        let id = UUID()
        do {
            try await pool.withTransaction { connection in
                try await connection.query(Self.insertTenant(id: id, name: name, dailyCompletionXP: dailyCompletionXP))
                try await RequestScope.set(on: connection, tenantID: id, userID: nil)
                try await connection.query(Self.insertKey(tenantID: id, key: key))
                // Its key for erasure markers (migration 0018): made here, by the owner.
                try await connection.query(Self.insertErasureKey(tenantID: id))
            }
        } catch let error as PGError where error.sqlState == .uniqueViolation {
            throw StoreError(.tenantExists, "a tenant named '\(name)' already exists")
        }
        guard let tenant = try await find(id.uuidString) else { throw StoreError(.tenantNotFound, "tenant '\(name)' disappeared right after it was created") }
        return tenant
    }

    public func list() async throws -> [Tenant] {
        let rows = try await pool.withConnection { try await $0.query(Self.selectTenants).rows }
        var tenants: [Tenant] = []
        for row in rows { tenants.append(try await tenant(from: row)) }
        return tenants
    }

    /// By id or by name.
    public func find(_ reference: String) async throws -> Tenant? {
        guard let row = try await pool.withConnection({ try await $0.query(Self.selectTenant(reference)).rows.first }) else { return nil }
        return try await tenant(from: row)
    }

    /// The tenant named by id or name; `StoreError.tenantNotFound` when there is none.
    public func require(_ reference: String) async throws -> Tenant {
        guard let found = try await find(reference) else { throw StoreError(.tenantNotFound, "no tenant '\(reference)'") }
        return found
    }

    /// Adds `key` and retires the tenant's other keys after `grace` (0: at once), so tokens
    /// signed with the old key keep working while devices pick up new ones.
    public func rotateKey(tenant reference: String, to key: TenantKey, grace: TimeInterval) async throws {
        guard let tenant = try await find(reference) else { throw StoreError(.tenantNotFound, "no tenant '\(reference)'") }
        try await pool.withTransaction { connection in
            try await RequestScope.set(on: connection, tenantID: tenant.id, userID: nil)
            try await connection.query(Self.retireKeys(tenantID: tenant.id, grace: grace))
            try await connection.query(Self.insertKey(tenantID: tenant.id, key: key))
        }
    }

    /// The keys that verify this tenant's tokens now; empty for an unknown or disabled tenant.
    public func activeKeys(tenantID: UUID) async throws -> [TenantKey] {
        try await pool.withTransaction(readOnly: true) { connection in
            try await RequestScope.set(on: connection, tenantID: tenantID, userID: nil)
            return try await connection.query(Self.selectActiveKeys(tenantID: tenantID)).rows.compactMap { row in
                guard let algorithm = TokenAlgorithm(rawValue: try row.decode("algorithm", as: String.self)) else { return nil }
                let material: TenantKey.Material
                if let secret = try row.decodeIfPresent("hs256_secret", as: PGBytes.self) {
                    material = .sharedSecret(secret.bytes)
                } else {
                    material = .publicKeyPEM(try row.decode("public_key_pem", as: String.self))
                }
                // Stored keys were checked on the way in; one that no longer parses verifies nothing.
                return try? TenantKey(id: try row.decode("id", as: UUID.self), algorithm: algorithm, material: material)
            }
        }
    }

    /// The newest active HS256 key, for `token mint`.
    public func signingKey(tenantID: UUID) async throws -> TenantKey {
        guard let key = try await activeKeys(tenantID: tenantID).first(where: { $0.algorithm == .hs256 }) else {
            throw StoreError(.noSigningKey, "the tenant has no active HS256 key; tokens of ES256/RS256 tenants are signed by their own issuer")
        }
        return key
    }

    private func tenant(from row: PGRow) async throws -> Tenant {
        let id = try row.decode("id", as: UUID.self)
        let algorithms = try await activeKeys(tenantID: id).map(\.algorithm)
        return Tenant(
            id: id, name: try row.decode("name"), dailyCompletionXP: try row.decode("daily_completion_xp"),
            createdAt: try row.decode("created_at"), disabled: try row.decode("disabled"), activeKeyAlgorithms: algorithms)
    }
}
