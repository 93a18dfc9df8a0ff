import Foundation
import HabitSyncDomain
import LibPQClient

/// Daily progress is one record per (habitId, date), whatever id each device gave it.
extension PushBatch {
    /// By id, and by natural key: two index lookups (as one `OR`, PostgreSQL scanned the
    /// user's whole history).
    static let progressByNaturalKey = """
        SELECT id, habit_id, date::text AS date FROM daily_progress
        WHERE tenant_id = $1 AND user_id = $2 AND id = ANY($3::uuid[])
        UNION
        SELECT p.id, p.habit_id, p.date::text FROM unnest($4::uuid[], $5::date[]) AS k(habit_id, date)
        JOIN daily_progress p ON p.tenant_id = $1 AND p.user_id = $2 AND p.habit_id = k.habit_id AND p.date = k.date
        """

    /// The canonical id of each progress change: the row already stored for its (habitId, date),
    /// else the first id this batch used for it, else its own.
    func canonicalProgressIDs(_ changes: [PushChange]) async throws -> [Int: UUID] {
        var natural: [(Int, UUID, LocalDate)] = []
        for change in changes {
            if case .dailyProgress(let p)? = change.record { natural.append((change.index, p.habitId, p.date)) }
        }
        let rows = try await connection.query(PGQuery(unsafeSQL: Self.progressByNaturalKey, binds: [
            tenant.pgBind(), user.pgBind(), changes.map(\.id).pgBind(),
            natural.map(\.1).pgBind(), natural.map { $0.2.description }.pgBind(),
        ])).rows
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
