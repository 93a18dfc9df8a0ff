import Foundation
import HabitSyncDomain
import LibPQClient

@testable import HabitSyncStore

/// The records whose tombstones maintenance purged during a run, each with the user's change
/// counter at its last purge. A write answered at or before that counter may be forgotten with
/// the tombstone (past the purge horizon an older write brings a record back, and a delete that
/// arrives again finds nothing to keep: `docs/protocol.md`); a write answered after it must
/// hold like any other. Read around each maintenance run, while no device pushes.
struct PurgedRecords: Sendable {
    struct Record: Hashable, Sendable {
        let user: String
        let collection: String
        let id: String
    }

    private(set) var lastPurge: [Record: Int64] = [:]

    /// The counter of `user` at the record's last purge; nil when it was never purged.
    func purgedAt(user: String, collection: String, id: String) -> Int64? {
        lastPurge[Record(user: user, collection: collection, id: id)]
    }

    /// The tenant's tombstones of the collections `FieldCheck` reads, each with its user's change
    /// counter now.
    static func tombstones(_ connection: PGConnection, tenant: UUID) async throws -> [Record: Int64] {
        var found: [Record: Int64] = [:]
        for collection in FieldCheck.fields.keys.sorted() {
            guard let kind = SyncCollection(rawValue: collection) else { continue }
            let table = PGFragment.identifier(kind.table)
            let rows = try await connection.query(
                """
                SELECT t.user_id, t.id::text AS id, u.change_counter FROM \(table) t
                JOIN users u ON u.tenant_id = t.tenant_id AND u.user_id = t.user_id
                WHERE t.tenant_id = \(tenant) AND t.deleted_at IS NOT NULL
                """
            ).rows
            for row in rows {
                let id = collection == "userSettings" ? "settings" : try row.decode("id", as: String.self)
                found[Record(user: try row.decode("user_id"), collection: collection, id: id)] = try row.decode("change_counter", as: Int64.self)
            }
        }
        return found
    }

    /// Notes the tombstones that were there before maintenance and are gone after it.
    mutating func note(before: [Record: Int64], after: [Record: Int64]) {
        for (record, counter) in before where after[record] == nil { lastPurge[record] = counter }
    }
}
