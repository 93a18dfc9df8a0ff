import Foundation
import HabitSyncAuth
import LibPQClient

/// The identity providers tenants accept (`tenant_issuers`, migration 0027). Admin commands
/// run as the schema owner inside the tenant's scope; requests read the rows of the one
/// issuer a token names (the `issuer_routing` policy), before they know the tenant.
public struct IssuerStore: Sendable {
    public let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    static let columns: PGFragment = "tenant_id, issuer, key_source, jwks_url, inline_keys, audiences, audience_claims, algorithms, user_claim, max_lifetime_seconds, preset"

    /// `SET LOCAL`, like `RequestScope`, so Citus passes it on; `iss` is validated by
    /// `IssuerRules` before it gets here (no control character, so no NUL) and quoted.
    static func routingScopeSQL(issuer: String) -> String {
        "SET LOCAL habitsync.token_issuer = \(PGQuery.quoteLiteral(issuer))"
    }

    static func selectByIssuer(_ issuer: String) -> PGQuery {
        "SELECT \(columns) FROM tenant_issuers WHERE issuer = \(issuer)"
    }

    /// Read in the tenant's own scope: `tenants` shows a request no other tenant's row.
    static func selectEnabled(_ tenantID: UUID) -> PGQuery {
        "SELECT 1 FROM tenants WHERE id = \(tenantID) AND disabled_at IS NULL"
    }

    static func selectByTenant(_ tenantID: UUID) -> PGQuery {
        "SELECT \(columns) FROM tenant_issuers WHERE tenant_id = \(tenantID) ORDER BY created_at, issuer"
    }

    static func insert(tenantID: UUID, _ configuration: IssuerConfiguration) -> PGQuery {
        let (source, url, inline): (String, String?, String?) =
            switch configuration.keySource {
            case .jwksURL(let url): ("jwks_url", url, nil)
            case .discovery: ("discovery", nil, nil)
            case .inline(let text): ("inline", nil, text)
            }
        return """
            INSERT INTO tenant_issuers (\(columns))
            VALUES (\(tenantID), \(configuration.issuer), \(source), \(url), \(inline), \(configuration.audiences),
                    \(configuration.audienceClaims.map(\.rawValue)), \(configuration.algorithms.map(\.rawValue)),
                    \(configuration.userClaim), \(configuration.maximumLifetime), \(configuration.preset?.rawValue))
            """
    }

    static func delete(tenantID: UUID, issuer: String) -> PGQuery {
        "DELETE FROM tenant_issuers WHERE tenant_id = \(tenantID) AND issuer = \(issuer)"
    }

    /// Adds are rare and must see each other: two at once could each miss the other's overlap.
    static let lockForAdd: PGQuery = "LOCK TABLE tenant_issuers IN SHARE ROW EXCLUSIVE MODE"

    /// Every tenant's configuration of `issuer` (enabled tenants only), for routing a token.
    /// `issuer` is a token's `iss` that `IssuerRules` accepted. One issuer serves one tenant,
    /// or a few with different audiences: the enabled check is one query per tenant of it.
    public func configurations(issuer: String) async throws -> [TenantIssuer] {
        guard IssuerRules.problem(issuer: issuer) == nil else { return [] }
        return try await pool.withTransaction(readOnly: true) { connection in
            try await connection.simpleQuery(unsafeSQL: Self.routingScopeSQL(issuer: issuer))
            let found = try await connection.query(Self.selectByIssuer(issuer)).rows.compactMap(Self.tenantIssuer)
            var enabled: [TenantIssuer] = []
            for tenant in found {
                try await RequestScope.set(on: connection, tenantID: tenant.tenantID, userID: nil)
                if try await !connection.query(Self.selectEnabled(tenant.tenantID)).rows.isEmpty { enabled.append(tenant) }
            }
            return enabled
        }
    }

    /// A tenant's issuers, oldest first.
    public func list(tenantID: UUID) async throws -> [TenantIssuer] {
        try await pool.withTransaction(readOnly: true) { connection in
            try await RequestScope.set(on: connection, tenantID: tenantID, userID: nil)
            return try await connection.query(Self.selectByTenant(tenantID)).rows.compactMap(Self.tenantIssuer)
        }
    }

    /// Adds `configuration` to the tenant; refuses an issuer the tenant already has, and one
    /// another tenant accepts with an audience in common (a token must route to one tenant).
    public func add(tenantID: UUID, _ configuration: IssuerConfiguration) async throws {
        try await pool.withTransaction { connection in
            try await connection.query(Self.lockForAdd)
            try await connection.simpleQuery(unsafeSQL: Self.routingScopeSQL(issuer: configuration.issuer))
            // Disabled tenants too: their issuers still count as taken.
            let existing = try await connection.query(Self.selectByIssuer(configuration.issuer)).rows.compactMap(Self.tenantIssuer)
            if existing.contains(where: { $0.tenantID == tenantID }) {
                throw StoreError(.issuerConflict, "the tenant already accepts \(configuration.issuer); remove-issuer it first to change it")
            }
            if let other = existing.first(where: { $0.configuration.overlaps(configuration) }) {
                throw StoreError(
                    .issuerConflict,
                    "tenant \(other.tenantID.uuidString.lowercased()) already accepts \(configuration.issuer) for "
                        + (other.configuration.audiences.isEmpty || configuration.audiences.isEmpty
                            ? "every audience" : "audience(s) \(Set(other.configuration.audiences).intersection(configuration.audiences).sorted().joined(separator: ", "))")
                        + "; tenants share an issuer only with different audiences")
            }
            try await RequestScope.set(on: connection, tenantID: tenantID, userID: nil)
            try await connection.query(Self.insert(tenantID: tenantID, configuration))
        }
    }

    /// Removes the tenant's configuration of `issuer`; its tokens are refused within the
    /// servers' cache lifetime.
    public func remove(tenantID: UUID, issuer: String) async throws {
        let removed = try await pool.withTransaction { connection in
            try await RequestScope.set(on: connection, tenantID: tenantID, userID: nil)
            return try await connection.query(Self.delete(tenantID: tenantID, issuer: issuer)).affectedRows ?? 0
        }
        guard removed > 0 else { throw StoreError(.issuerNotFound, "the tenant has no issuer \(issuer)") }
    }

    /// A row as a configuration; one the rules no longer accept is skipped (it verifies nothing).
    static func tenantIssuer(_ row: PGRow) throws -> TenantIssuer? {
        let keySource: IssuerConfiguration.KeySource
        switch try row.decode("key_source", as: String.self) {
        case "jwks_url": keySource = .jwksURL(try row.decode("jwks_url"))
        case "discovery": keySource = .discovery
        default: keySource = .inline(try row.decode("inline_keys"))
        }
        let presetName: String? = try row.decodeIfPresent("preset", as: String.self)
        let claims = try row.decode("audience_claims", as: [String].self).compactMap(IssuerConfiguration.AudienceClaim.init(rawValue:))
        let algorithms = try row.decode("algorithms", as: [String].self).compactMap(IssuerAlgorithm.init(rawValue:))
        guard
            let configuration = try? IssuerConfiguration(
                issuer: try row.decode("issuer"), keySource: keySource, audiences: try row.decode("audiences"),
                audienceClaims: claims, algorithms: algorithms, userClaim: try row.decode("user_claim"),
                maximumLifetime: try row.decode("max_lifetime_seconds"), preset: presetName.flatMap(IssuerPreset.init(rawValue:)))
        else { return nil }
        return TenantIssuer(tenantID: try row.decode("tenant_id"), configuration: configuration)
    }
}
