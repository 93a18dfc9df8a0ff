import Foundation
import HabitSyncDomain
import LibPQClient

/// The webhook outbox as the deliverer of every replica works it (migration 0046): it claims
/// deliveries that are due, sends them outside any transaction, and records what came of them.
/// Replicas share the work through row locks (`SKIP LOCKED`); a claimed delivery is leased, so
/// one whose replica died is due again when the lease ends (at least once, never lost).
public struct WebhookQueue: Sendable {
    public let pool: PGPool
    public let schedule: WebhookRetrySchedule

    public init(pool: PGPool, schedule: WebhookRetrySchedule = WebhookRetrySchedule()) {
        self.pool = pool
        self.schedule = schedule
    }

    /// A claimed delivery and where it goes.
    public struct Claimed: Sendable, Equatable {
        public let tenantID: UUID
        public let userID: String
        public let endpointID: UUID
        public let firstVersion: Int64
        public let deliveryID: UUID
        /// `WebhookEvent.json`, as stored.
        public let event: String
        /// This attempt's number (1 for the first).
        public let attempt: Int
        public let maxAttempts: Int
        public let url: String
        public let secret: [UInt8]
        public let includeRecords: Bool
        public let createdAt: Date
    }

    /// What one attempt came to.
    public enum Outcome: Sendable, Equatable {
        /// A 2xx answer.
        case delivered(status: Int)
        /// Any other answer (`status`), or none (`status` nil: refused, timed out, failed);
        /// `reason` is for the operator and never holds the answer's body.
        case failed(status: Int?, reason: String)
    }

    /// Every tenant's deliveries: the deliverer's transactions say so (policies `deliverer`).
    static let delivererScope = [PGLocalSetting("habitsync.scope", "webhooks")]

    /// What is written back for one attempted delivery.
    struct Settled {
        let claimed: Claimed
        let state: WebhookStore.State
        let status: Int?
        let error: String?
        /// Pending again: after this many seconds.
        let retryInSeconds: Double?
    }

    /// An endpoint after a round: its failures in a row, and how long it rests (nil: not).
    struct EndpointHealth {
        let tenant: UUID
        let endpoint: UUID
        let failures: Int
        let restSeconds: Double?
    }

    /// Due deliveries that are the next of their user to their endpoint (the user's earlier
    /// ones are delivered or dead), to endpoints neither paused nor resting, oldest due first;
    /// each is counted as an attempt and leased for `lease` seconds. Endpoint by endpoint
    /// (`webhook_deliveries_due_by_endpoint`, migration 0048): a paused or resting endpoint's
    /// backlog is never read, however long it is.
    static func claim(limit: Int, leaseSeconds: Double) -> PGQuery {
        """
        WITH due AS (
            SELECT d.tenant_id, d.user_id, d.endpoint_id, d.first_version, d.next_attempt_at
            FROM webhook_endpoints e
            CROSS JOIN LATERAL (
                SELECT d.tenant_id, d.user_id, d.endpoint_id, d.first_version, d.next_attempt_at
                FROM webhook_deliveries d
                WHERE d.tenant_id = e.tenant_id AND d.endpoint_id = e.endpoint_id AND d.state = 'pending' AND d.next_attempt_at <= now()
                  AND NOT EXISTS (SELECT 1 FROM webhook_deliveries p
                                  WHERE p.state = 'pending' AND p.tenant_id = d.tenant_id AND p.endpoint_id = d.endpoint_id AND p.user_id = d.user_id
                                    AND p.first_version < d.first_version)
                ORDER BY d.next_attempt_at
                LIMIT \(limit)
                FOR UPDATE SKIP LOCKED) d
            WHERE NOT e.paused AND (e.retry_at IS NULL OR e.retry_at <= now())
            ORDER BY d.next_attempt_at
            LIMIT \(limit))
        UPDATE webhook_deliveries w SET attempts = w.attempts + 1, next_attempt_at = now() + make_interval(secs => \(leaseSeconds))
        FROM due, webhook_endpoints e
        WHERE w.tenant_id = due.tenant_id AND w.user_id = due.user_id AND w.endpoint_id = due.endpoint_id AND w.first_version = due.first_version
          AND e.tenant_id = w.tenant_id AND e.endpoint_id = w.endpoint_id
        RETURNING w.tenant_id, w.user_id, w.endpoint_id, w.first_version, w.delivery_id, w.event::text AS event, w.attempts, w.created_at,
                  e.max_attempts, e.url, e.secret, e.include_records
        """
    }

    /// The attempts' results, in one statement: each delivery delivered, dead, or due again
    /// later (and its user's later deliveries to the endpoint no sooner, so that they are not
    /// looked at before it); each endpoint's failures in a row and rest.
    static func finish(_ rows: [Settled], endpoints: [EndpointHealth]) -> PGQuery {
        """
        WITH outcome AS (
            SELECT * FROM unnest(\(rows.map(\.claimed.tenantID))::uuid[], \(rows.map(\.claimed.userID))::text[], \(rows.map(\.claimed.endpointID))::uuid[],
                                 \(rows.map(\.claimed.firstVersion))::bigint[], \(rows.map(\.state.rawValue))::text[], \(rows.map(\.status))::integer[],
                                 \(rows.map(\.error))::text[], \(rows.map(\.retryInSeconds))::float8[])
                AS o(tenant_id, user_id, endpoint_id, first_version, state, status, error, retry_in)),
        finished AS (
            UPDATE webhook_deliveries w SET state = o.state, last_status = o.status, last_error = o.error,
                next_attempt_at = CASE WHEN o.state = 'pending' THEN now() + make_interval(secs => o.retry_in) ELSE w.next_attempt_at END,
                finished_at = CASE WHEN o.state = 'pending' THEN NULL ELSE now() END
            FROM outcome o
            WHERE w.tenant_id = o.tenant_id AND w.user_id = o.user_id AND w.endpoint_id = o.endpoint_id AND w.first_version = o.first_version
              AND w.state = 'pending'),
        later AS (
            UPDATE webhook_deliveries w SET next_attempt_at = now() + make_interval(secs => o.retry_in)
            FROM outcome o
            WHERE o.state = 'pending' AND w.tenant_id = o.tenant_id AND w.user_id = o.user_id AND w.endpoint_id = o.endpoint_id
              AND w.first_version > o.first_version AND w.state = 'pending' AND w.next_attempt_at < now() + make_interval(secs => o.retry_in))
        UPDATE webhook_endpoints e SET consecutive_failures = x.failures,
            retry_at = CASE WHEN x.rest IS NULL THEN NULL ELSE now() + make_interval(secs => x.rest) END
        FROM unnest(\(endpoints.map(\.tenant))::uuid[], \(endpoints.map(\.endpoint))::uuid[], \(endpoints.map(\.failures))::integer[],
                    \(endpoints.map(\.restSeconds))::float8[]) AS x(tenant_id, endpoint_id, failures, rest)
        WHERE e.tenant_id = x.tenant_id AND e.endpoint_id = x.endpoint_id
        """
    }

    /// The retention: a delivery still pending after `retention` dies (never silently: it is
    /// listed dead, and can be redelivered); one finished that long ago is deleted.
    static func prune(retentionSeconds: Double) -> PGQuery {
        """
        WITH expired AS (
            UPDATE webhook_deliveries SET state = 'dead', finished_at = now(), last_error = 'pending longer than the retention'
            WHERE state = 'pending' AND created_at < now() - make_interval(secs => \(retentionSeconds))
            RETURNING 1)
        DELETE FROM webhook_deliveries WHERE state <> 'pending' AND finished_at < now() - make_interval(secs => \(retentionSeconds))
        """
    }

    static func endpointFailures(_ keys: [(tenant: UUID, endpoint: UUID)]) -> PGQuery {
        """
        SELECT e.tenant_id, e.endpoint_id, e.consecutive_failures FROM webhook_endpoints e
        JOIN unnest(\(keys.map(\.tenant))::uuid[], \(keys.map(\.endpoint))::uuid[]) AS k(tenant_id, endpoint_id)
          ON e.tenant_id = k.tenant_id AND e.endpoint_id = k.endpoint_id
        """
    }

    /// `text` cut to whole characters within `bytes` of UTF-8 (the column's check).
    static func clipped(_ text: String, toBytes bytes: Int) -> String {
        var clipped = ""
        for character in text {
            guard clipped.utf8.count + character.utf8.count <= bytes else { break }
            clipped.append(character)
        }
        return clipped
    }

    /// At most `limit` deliveries, each leased for `lease`.
    public func claim(limit: Int, lease: Duration) async throws -> [Claimed] {
        try await pool.withTransaction(localSettings: Self.delivererScope) { connection in
            try await connection.query(Self.claim(limit: limit, leaseSeconds: lease / .seconds(1))).rows.map { row in
                Claimed(
                    tenantID: try row.decode("tenant_id", as: UUID.self), userID: try row.decode("user_id", as: String.self),
                    endpointID: try row.decode("endpoint_id", as: UUID.self), firstVersion: try row.decode("first_version", as: Int64.self),
                    deliveryID: try row.decode("delivery_id", as: UUID.self), event: try row.decode("event", as: String.self),
                    attempt: try row.decode("attempts", as: Int.self), maxAttempts: try row.decode("max_attempts", as: Int.self),
                    url: try row.decode("url", as: String.self), secret: try row.decode("secret", as: PGBytes.self).bytes,
                    includeRecords: try row.decode("include_records", as: Bool.self), createdAt: try row.decode("created_at", as: Date.self))
            }
        }
    }

    /// Records each attempt's outcome; returns how many were delivered, will be tried again, died.
    @discardableResult
    public func finish(_ attempts: [(Claimed, Outcome)]) async throws -> (delivered: Int, retried: Int, dead: Int) {
        guard !attempts.isEmpty else { return (0, 0, 0) }
        var rows: [Settled] = []
        var tally = (delivered: 0, retried: 0, dead: 0)
        for (claimed, outcome) in attempts {
            switch outcome {
            case .delivered(let status):
                rows.append(Settled(claimed: claimed, state: .delivered, status: status, error: nil, retryInSeconds: nil))
                tally.delivered += 1
            case .failed(let status, let reason):
                let reason = Self.clipped(reason, toBytes: 300)
                if claimed.attempt >= claimed.maxAttempts {
                    rows.append(Settled(claimed: claimed, state: .dead, status: status, error: reason, retryInSeconds: nil))
                    tally.dead += 1
                } else {
                    rows.append(
                        Settled(claimed: claimed, state: .pending, status: status, error: reason, retryInSeconds: schedule.delay(afterAttempt: claimed.attempt) / .seconds(1)))
                    tally.retried += 1
                }
            }
        }
        try await pool.withTransaction(localSettings: Self.delivererScope) { connection in
            // Each endpoint's failures in a row: reset by a success, else grown by this round's.
            var byEndpoint: [[UUID]: (tenant: UUID, endpoint: UUID, succeeded: Bool, failed: Int)] = [:]
            for (claimed, outcome) in attempts {
                var entry = byEndpoint[[claimed.tenantID, claimed.endpointID]] ?? (claimed.tenantID, claimed.endpointID, false, 0)
                if case .delivered = outcome { entry.succeeded = true } else { entry.failed += 1 }
                byEndpoint[[claimed.tenantID, claimed.endpointID]] = entry
            }
            let keys = byEndpoint.values.map { (tenant: $0.tenant, endpoint: $0.endpoint) }
            var before: [[UUID]: Int] = [:]
            for row in try await connection.query(Self.endpointFailures(keys)).rows {
                before[[try row.decode("tenant_id", as: UUID.self), try row.decode("endpoint_id", as: UUID.self)]] = try row.decode("consecutive_failures", as: Int.self)
            }
            let endpoints = byEndpoint.map { key, entry in
                let failures = entry.succeeded ? 0 : (before[key] ?? 0) + entry.failed
                return EndpointHealth(
                    tenant: entry.tenant, endpoint: entry.endpoint, failures: failures,
                    restSeconds: failures == 0 ? nil : schedule.endpointPause(afterFailures: failures) / .seconds(1))
            }
            try await connection.query(Self.finish(rows, endpoints: endpoints))
        }
        return tally
    }

    /// Applies the retention (`prune(retentionSeconds:)`); returns the rows deleted.
    @discardableResult
    public func prune(retention: Duration) async throws -> Int {
        try await pool.withTransaction(localSettings: Self.delivererScope) { connection in
            try await connection.query(Self.prune(retentionSeconds: retention / .seconds(1))).affectedRows ?? 0
        }
    }

    /// The changed records a delivery carries when its endpoint asks (`include_records`): the
    /// user's stored changes in the push's versions, as a pull renders them, read in the user's
    /// scope. A record changed again since holds a later version and is left out: a later
    /// delivery carries it.
    public func records(of claimed: Claimed, firstVersion: Int64, lastVersion: Int64) async throws -> [String] {
        let scope = try RequestScope.settings(tenantID: claimed.tenantID, userID: claimed.userID)
        let count = Int(clamping: max(0, lastVersion - firstVersion + 1))
        return try await pool.withTransaction(readOnly: true, localSettings: scope) { connection in
            let page = PullPageSQL.page(
                SyncCollection.allCases, tenant: claimed.tenantID, user: claimed.userID, after: firstVersion - 1, limit: min(count, 10_000), tombstoneFloor: 0,
                selection: .all, window: nil)
            return try await connection.query(page).rows.compactMap { row in
                guard try row.decode("server_version", as: Int64.self) <= lastVersion else { return nil }
                return try row.decode("change", as: String.self)
            }
        }
    }
}
