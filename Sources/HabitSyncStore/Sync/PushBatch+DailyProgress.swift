import Foundation
import HabitSyncDomain
import LibPQClient

/// Daily progress is one record per (habitId, date), whatever id each device gave it.
extension PushBatch {
    /// By id, and by natural key: one index probe per key (as one `OR`, or as joins, PostgreSQL
    /// scanned the user's whole history; see `SyncTableSQL`).
    static func progressByNaturalKey(tenant: UUID, user: String, ids: [UUID], habits: [UUID], dates: [String]) -> PGQuery {
        """
        SELECT p.id, p.habit_id, p.date::text AS date FROM unnest(\(ids)::uuid[]) AS k(id)
        CROSS JOIN LATERAL (SELECT id, habit_id, date FROM daily_progress WHERE tenant_id = \(tenant) AND user_id = \(user) AND id = k.id OFFSET 0) p
        UNION
        SELECT p.id, p.habit_id, p.date::text FROM unnest(\(habits)::uuid[], \(dates)::date[]) AS k(habit_id, date)
        CROSS JOIN LATERAL (SELECT id, habit_id, date FROM daily_progress
                            WHERE tenant_id = \(tenant) AND user_id = \(user) AND habit_id = k.habit_id AND date = k.date OFFSET 0) p
        """
    }

    /// The canonical id of each progress change: the row already stored for its (habitId, date),
    /// else the first id this batch used for it, else its own.
    func canonicalProgressIDs(_ changes: [PushChange]) async throws -> [Int: UUID] {
        var natural: [(Int, UUID, LocalDate)] = []
        for change in changes {
            if case .dailyProgress(let p)? = change.record { natural.append((change.index, p.habitId, p.date)) }
        }
        let rows = try await connection.query(Self.progressByNaturalKey(
            tenant: tenant, user: user, ids: changes.map(\.id), habits: natural.map(\.1), dates: natural.map { $0.2.description })).rows
        var byNaturalKey: [String: UUID] = [:]
        for row in rows {
            // A tombstone of an id the server never saw has no natural key.
            guard let habit = try row.decodeIfPresent("habit_id", as: UUID.self), let date = try row.decodeIfPresent("date", as: String.self) else { continue }
            byNaturalKey["\(habit)|\(date)"] = try row.decode("id", as: UUID.self)
        }
        var canonical: [Int: UUID] = [:]
        for change in changes {
            guard case .dailyProgress(let p)? = change.record else { continue }
            let key = "\(p.habitId)|\(p.date)"
            if let existing = byNaturalKey[key] {
                canonical[change.index] = existing
            } else {
                byNaturalKey[key] = change.id
                canonical[change.index] = change.id
            }
        }
        return canonical
    }
}
