import Foundation
import HabitSyncDomain
import LibPQClient

/// Focus sessions: final states stay final, and at most one session runs per user.
extension PushBatch {
    static func runningSessions(tenant: UUID, user: String) -> PGQuery {
        """
        SELECT id, start_time FROM focus_sessions
        WHERE tenant_id = \(tenant) AND user_id = \(user) AND state IN ('active', 'paused') AND deleted_at IS NULL
        """
    }

    /// Abandons the stored `losers` at `survivorStart` (authored by the server), numbering their
    /// versions from `after + 1`.
    /// The new values are computed in the subquery, not in `SET`: Citus refuses stable
    /// functions with column references (`timestamptz + interval`) in an `UPDATE`.
    static func abandonSessions(tenant: UUID, user: String, losers: [UUID], survivorStart: Date, after version: Int64) -> PGQuery {
        """
        UPDATE focus_sessions f SET state = 'abandoned', end_time = l.end_time, updated_at = l.updated_at,
            updated_by = \(ServerDevice.sql), server_version = \(version) + l.n, synced_at = l.now
        FROM (SELECT s.id, row_number() OVER (ORDER BY s.id) AS n, greatest(\(survivorStart)::timestamptz, s.start_time) AS end_time,
                     greatest(date_trunc('milliseconds', now()), s.updated_at + interval '1 millisecond') AS updated_at, now() AS now
              FROM unnest(\(losers)::uuid[]) AS k(id)
              CROSS JOIN LATERAL (SELECT id, start_time, updated_at FROM focus_sessions
                                  WHERE tenant_id = \(tenant) AND user_id = \(user) AND id = k.id OFFSET 0) s) l
        WHERE f.tenant_id = \(tenant) AND f.user_id = \(user) AND f.id = l.id
        """
    }

    /// When more than one session would be running, every one but the latest-started is
    /// abandoned by the server at the latest one's start: stored ones with one statement
    /// before the write, incoming ones by writing them as abandoned (authored by the server).
    func settleRunningSessions(_ changes: [PushChange]) async throws -> (serverAuthored: Set<Int>, records: [Int: ValidatedRecord]) {
        var latestByID: [UUID: PushChange] = [:]
        for change in changes where latestByID[change.id].map({ $0.updatedAt <= change.updatedAt }) ?? true { latestByID[change.id] = change }
        var running: [(id: UUID, start: Date, change: PushChange?)] = latestByID.values.compactMap { change in
            guard case .focusSession(let session)? = change.record, session.isRunning else { return nil }
            return (change.id, session.startTime, change)
        }
        let stored = try await connection.query(Self.runningSessions(tenant: tenant, user: user)).rows
        for row in stored {
            let id = try row.decode("id", as: UUID.self)
            if latestByID[id] == nil { running.append((id, try row.decode("start_time", as: Date.self), nil)) }
        }
        guard running.count > 1, let survivor = running.max(by: { ($0.start, $0.id.uuidString) < ($1.start, $1.id.uuidString) }) else { return ([], [:]) }
        var serverAuthored: Set<Int> = []
        var records: [Int: ValidatedRecord] = [:]
        var storedLosers: [UUID] = []
        for session in running where session.id != survivor.id {
            if let change = session.change, case .focusSession(var record)? = change.record {
                record.state = "abandoned"
                record.endTime = max(survivor.start, record.startTime)
                for other in changes where other.id == change.id {
                    serverAuthored.insert(other.index)
                    records[other.index] = .focusSession(record)
                }
            } else {
                storedLosers.append(session.id)
            }
        }
        if !storedLosers.isEmpty {
            try await connection.query(
                Self.abandonSessions(
                    tenant: tenant, user: user, losers: storedLosers, survivorStart: survivor.start,
                    after: nextVersion - 1))
            nextVersion += Int64(storedLosers.count)
        }
        return (serverAuthored, records)
    }
}
