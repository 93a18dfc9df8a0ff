import Foundation
import HabitSyncDomain
import LibPQClient

/// A tenant's webhook endpoints and their deliveries, as admins manage them (`tenant
/// add-webhook`, `webhooks`, `remove-webhook`, `pause-webhook`, `resume-webhook`,
/// `webhook-deliveries`, `redeliver`): each in the tenant's own row-level security scope.
public struct WebhookStore: Sendable {
    public let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    /// One delivery, as `tenant webhook-deliveries` lists it: what it says, never the records.
    public struct Delivery: Sendable, Equatable {
        public let id: UUID
        public let endpointID: UUID
        public let userID: String
        public let firstVersion: Int64
        public let state: String
        public let attempts: Int
        public let nextAttemptAt: Date?
        public let lastStatus: Int?
        public let lastError: String?
        public let createdAt: Date
        public let finishedAt: Date?
    }

    public enum State: String, Sendable, CaseIterable {
        case pending, delivered, dead
    }

    static func insertEndpoint(tenant: UUID, _ request: WebhookEndpointRequest) -> PGQuery {
        """
        INSERT INTO webhook_endpoints (tenant_id, url, collections, include_records, secret, max_attempts)
        VALUES (\(tenant), \(request.url), \(request.collections?.map(\.rawValue))::text[], \(request.includeRecords), \(PGBytes(request.secret)), \(request.maxAttempts))
        RETURNING endpoint_id
        """
    }

    static func selectEndpoints(tenant: UUID) -> PGQuery {
        """
        SELECT e.endpoint_id, e.url, e.collections, e.include_records, e.max_attempts, e.paused, e.consecutive_failures, e.created_at,
               coalesce(c.pending, 0) AS pending, coalesce(c.delivered, 0) AS delivered, coalesce(c.dead, 0) AS dead
        FROM webhook_endpoints e
        LEFT JOIN (SELECT endpoint_id, count(*) FILTER (WHERE state = 'pending') AS pending, count(*) FILTER (WHERE state = 'delivered') AS delivered,
                          count(*) FILTER (WHERE state = 'dead') AS dead
                   FROM webhook_deliveries WHERE tenant_id = \(tenant) GROUP BY endpoint_id) c ON c.endpoint_id = e.endpoint_id
        WHERE e.tenant_id = \(tenant) ORDER BY e.created_at, e.endpoint_id
        """
    }

    static func deleteEndpoint(tenant: UUID, endpoint: UUID) -> PGQuery {
        "DELETE FROM webhook_endpoints WHERE tenant_id = \(tenant) AND endpoint_id = \(endpoint)"
    }

    static func setPaused(tenant: UUID, endpoint: UUID, paused: Bool) -> PGQuery {
        // Resuming also forgets the endpoint's backoff: its deliveries go at once.
        """
        UPDATE webhook_endpoints SET paused = \(paused), retry_at = CASE WHEN \(paused) THEN retry_at END,
            consecutive_failures = CASE WHEN \(paused) THEN consecutive_failures ELSE 0 END
        WHERE tenant_id = \(tenant) AND endpoint_id = \(endpoint)
        """
    }

    static func selectDeliveries(tenant: UUID, endpoint: UUID?, state: State?, limit: Int) -> PGQuery {
        """
        SELECT delivery_id, endpoint_id, user_id, first_version, state, attempts, next_attempt_at, last_status, last_error, created_at, finished_at
        FROM webhook_deliveries
        WHERE tenant_id = \(tenant) AND (\(endpoint)::uuid IS NULL OR endpoint_id = \(endpoint)) AND (\(state?.rawValue)::text IS NULL OR state = \(state?.rawValue))
        ORDER BY created_at DESC, first_version DESC LIMIT \(limit)
        """
    }

    /// Back to pending, at once, with its attempts counted again: a delivery that died or was
    /// delivered, named by id, or every dead one (of an endpoint). Its place in its user's
    /// order is where its push was: the user's later deliveries wait for it.
    static func redeliver(tenant: UUID, ids: [UUID]?, deadOf endpoint: UUID?) -> PGQuery {
        """
        WITH again AS (
            UPDATE webhook_deliveries SET state = 'pending', attempts = 0, next_attempt_at = now(), finished_at = NULL, last_error = NULL, last_status = NULL
            WHERE tenant_id = \(tenant) AND state <> 'pending'
              AND (CASE WHEN \(ids)::uuid[] IS NULL THEN state = 'dead' AND (\(endpoint)::uuid IS NULL OR endpoint_id = \(endpoint))
                        ELSE delivery_id = ANY (\(ids)::uuid[]) END)
            RETURNING endpoint_id),
        endpoints AS (
            UPDATE webhook_endpoints SET retry_at = NULL, consecutive_failures = 0
            WHERE tenant_id = \(tenant) AND endpoint_id IN (SELECT endpoint_id FROM again))
        SELECT count(*) AS again FROM again
        """
    }

    private func inTenant<Result>(_ tenant: UUID, readOnly: Bool = false, _ body: (PGConnection) async throws -> Result) async throws -> Result {
        try await RequestScope.inTenant(pool, tenant, readOnly: readOnly, body)
    }

    /// The new endpoint's id. It hears the pushes that commit after this returns.
    public func addEndpoint(tenant: UUID, _ request: WebhookEndpointRequest) async throws -> UUID {
        try await inTenant(tenant) { try await $0.query(Self.insertEndpoint(tenant: tenant, request)).single().decode("endpoint_id", as: UUID.self) }
    }

    public func endpoints(tenant: UUID) async throws -> [WebhookEndpoint] {
        try await inTenant(tenant, readOnly: true) { connection in
            try await connection.query(Self.selectEndpoints(tenant: tenant)).rows.map { row in
                var endpoint = WebhookEndpoint(
                    id: try row.decode("endpoint_id", as: UUID.self), url: try row.decode("url", as: String.self),
                    collections: try row.decodeIfPresent("collections", as: [String].self)?.compactMap(SyncCollection.init(rawValue:)),
                    includeRecords: try row.decode("include_records", as: Bool.self), maxAttempts: try row.decode("max_attempts", as: Int.self),
                    paused: try row.decode("paused", as: Bool.self), consecutiveFailures: try row.decode("consecutive_failures", as: Int.self),
                    createdAt: try row.decode("created_at", as: Date.self))
                endpoint.pending = try row.decode("pending", as: Int64.self)
                endpoint.delivered = try row.decode("delivered", as: Int64.self)
                endpoint.dead = try row.decode("dead", as: Int64.self)
                return endpoint
            }
        }
    }

    /// False when the tenant has no such endpoint. Its deliveries go with it.
    public func removeEndpoint(tenant: UUID, endpoint: UUID) async throws -> Bool {
        try await inTenant(tenant) { try await $0.query(Self.deleteEndpoint(tenant: tenant, endpoint: endpoint)).affectedRows == 1 }
    }

    /// False when the tenant has no such endpoint.
    public func setPaused(tenant: UUID, endpoint: UUID, _ paused: Bool) async throws -> Bool {
        try await inTenant(tenant) { try await $0.query(Self.setPaused(tenant: tenant, endpoint: endpoint, paused: paused)).affectedRows == 1 }
    }

    /// The latest first.
    public func deliveries(tenant: UUID, endpoint: UUID? = nil, state: State? = nil, limit: Int = 100) async throws -> [Delivery] {
        try await inTenant(tenant, readOnly: true) { connection in
            try await connection.query(Self.selectDeliveries(tenant: tenant, endpoint: endpoint, state: state, limit: max(1, limit))).rows.map { row in
                let state = try row.decode("state", as: String.self)
                return Delivery(
                    id: try row.decode("delivery_id", as: UUID.self), endpointID: try row.decode("endpoint_id", as: UUID.self),
                    userID: try row.decode("user_id", as: String.self), firstVersion: try row.decode("first_version", as: Int64.self),
                    state: state, attempts: try row.decode("attempts", as: Int.self),
                    nextAttemptAt: state == "pending" ? try row.decode("next_attempt_at", as: Date.self) : nil,
                    lastStatus: try row.decodeIfPresent("last_status", as: Int.self), lastError: try row.decodeIfPresent("last_error", as: String.self),
                    createdAt: try row.decode("created_at", as: Date.self), finishedAt: try row.decodeIfPresent("finished_at", as: Date.self))
            }
        }
    }

    /// How many deliveries went back to pending: those named (dead or delivered), or with
    /// `ids` nil every dead one (of `endpoint`, when given).
    public func redeliver(tenant: UUID, ids: [UUID]?, deadOf endpoint: UUID? = nil) async throws -> Int {
        try await inTenant(tenant) { try await $0.query(Self.redeliver(tenant: tenant, ids: ids, deadOf: endpoint)).single().decode("again", as: Int.self) }
    }
}
