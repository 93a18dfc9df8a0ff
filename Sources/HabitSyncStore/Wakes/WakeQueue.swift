import Foundation
import LibPQClient

/// The background wakes due (migration 0047), as every replica's waker works them: a push that
/// stored something marked the user's other devices' tokens (`markOtherDevices`); the waker
/// claims those whose last wake is at least the tenant's interval old, sends each, and drops a
/// token APNs refuses for good. Replicas share the work through row locks (`SKIP LOCKED`).
public struct WakeQueue: Sendable {
    public let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    /// A wake to send, and the tenant's key to send it with.
    public struct Claimed: Sendable, Equatable {
        public let tenantID: UUID
        public let userID: String
        public let deviceID: String
        public let token: String
        public let keyID: String
        public let teamID: String
        public let topic: String
        public let environment: APNsSettings.Environment
        public let signingKey: String
    }

    /// What came of one wake.
    public enum Outcome: Sendable, Equatable {
        case sent
        /// APNs says the token is no longer valid (410, or 400 `BadDeviceToken`): it is deleted.
        case tokenInvalid
        /// Not sent (no answer, throttled, a failure on either side): due again after the interval.
        case failed(reason: String)
    }

    /// Every tenant's tokens: the waker's transactions say so (policies `waker`).
    static let wakerScope = [PGLocalSetting("habitsync.scope", "wakes")]

    /// Part of a push's closing statement (`PushStore.closePush`): the user's other devices with
    /// a token are due a wake, when the tenant has an APNs key (else no token ever waits for the
    /// waker to read past it). A probe of the tenant's key and of the user's tokens; a token
    /// already due is left as it is.
    static func markOtherDevices(tenant: UUID, user: String, device: String) -> PGQuery {
        """
        UPDATE device_push_tokens SET wake_due = true
        WHERE tenant_id = \(tenant) AND user_id = \(user) AND device_id <> \(device) AND NOT wake_due
          AND EXISTS (SELECT 1 FROM tenant_apns a WHERE a.tenant_id = \(tenant))
        """
    }

    /// Due tokens of tenants with a key whose last wake is at least the tenant's interval old,
    /// the longest waiting first; each is marked woken as it is claimed (a wake is a hint: one
    /// that fails is due again, `finish`).
    static func claim(limit: Int) -> PGQuery {
        """
        WITH due AS (
            SELECT t.tenant_id, t.user_id, t.device_id
            FROM device_push_tokens t JOIN tenant_apns a ON a.tenant_id = t.tenant_id
            WHERE t.wake_due AND (t.last_wake_at IS NULL OR t.last_wake_at <= now() - make_interval(secs => a.wake_interval_seconds))
            ORDER BY t.last_wake_at NULLS FIRST
            LIMIT \(limit)
            FOR UPDATE OF t SKIP LOCKED)
        UPDATE device_push_tokens t SET wake_due = false, last_wake_at = now()
        FROM due, tenant_apns a
        WHERE t.tenant_id = due.tenant_id AND t.user_id = due.user_id AND t.device_id = due.device_id AND a.tenant_id = t.tenant_id
        RETURNING t.tenant_id, t.user_id, t.device_id, t.token, a.key_id, a.team_id, a.topic, a.environment, a.signing_key
        """
    }

    /// Tokens APNs refused for good are deleted (unless the device registered another since);
    /// wakes that failed are due again.
    static func finish(invalid: [Claimed], failed: [Claimed]) -> PGQuery {
        """
        WITH gone AS (
            DELETE FROM device_push_tokens t
            USING unnest(\(invalid.map(\.tenantID))::uuid[], \(invalid.map(\.userID))::text[], \(invalid.map(\.deviceID))::text[], \(invalid.map(\.token))::text[])
                AS g(tenant_id, user_id, device_id, token)
            WHERE t.tenant_id = g.tenant_id AND t.user_id = g.user_id AND t.device_id = g.device_id AND t.token = g.token)
        UPDATE device_push_tokens t SET wake_due = true
        FROM unnest(\(failed.map(\.tenantID))::uuid[], \(failed.map(\.userID))::text[], \(failed.map(\.deviceID))::text[]) AS f(tenant_id, user_id, device_id)
        WHERE t.tenant_id = f.tenant_id AND t.user_id = f.user_id AND t.device_id = f.device_id
        """
    }

    public func claim(limit: Int) async throws -> [Claimed] {
        try await pool.withTransaction(localSettings: Self.wakerScope) { connection in
            try await connection.query(Self.claim(limit: limit)).rows.map { row in
                Claimed(
                    tenantID: try row.decode("tenant_id", as: UUID.self), userID: try row.decode("user_id", as: String.self),
                    deviceID: try row.decode("device_id", as: String.self), token: try row.decode("token", as: String.self),
                    keyID: try row.decode("key_id", as: String.self), teamID: try row.decode("team_id", as: String.self),
                    topic: try row.decode("topic", as: String.self),
                    environment: APNsSettings.Environment(rawValue: try row.decode("environment", as: String.self)) ?? .production,
                    signingKey: try row.decode("signing_key", as: String.self))
            }
        }
    }

    public func finish(_ outcomes: [(Claimed, Outcome)]) async throws {
        let invalid = outcomes.filter { $0.1 == .tokenInvalid }.map(\.0)
        let failed = outcomes.filter { if case .failed = $0.1 { true } else { false } }.map(\.0)
        guard !invalid.isEmpty || !failed.isEmpty else { return }
        try await pool.withTransaction(localSettings: Self.wakerScope) { connection in
            _ = try await connection.query(Self.finish(invalid: invalid, failed: failed))
        }
    }
}
