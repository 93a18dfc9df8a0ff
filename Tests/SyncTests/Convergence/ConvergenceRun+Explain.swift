import Foundation
import HabitSyncClient
import HabitSyncDomain
import LibPQClient
import SyncTestSupport
import TestSupport

extension ConvergenceRun {
    /// Everything known of one record that differs, for the failure message: both values, the
    /// device's sync fields, the server's row (tombstone or not), its conflict log, the user's
    /// counter and purge horizon, and what happened to the record and the device, in order.
    static func explain(
        _ collection: SyncCollection, _ id: UUID, device: SimulatedDevice, world: SyncWorld, user: String,
        mine: String?, server: String?
    ) async throws -> String {
        let local = try await device.store.record(collection, id: id)
        let localFields =
            local.map {
                "status \($0.syncStatus), serverVersion \($0.serverVersion.map(String.init) ?? "nil"), updated \($0.updatedAt.timeIntervalSince1970) by \($0.updatedBy), deleted \($0.isDeleted)"
            } ?? "no local row"
        let key = id.uuidString.lowercased()
        let (row, conflicts, owner) = try await world.database.withPool(size: 1) { pool in
            try await pool.withConnection { connection in
                let row = try await Self.serverRow(connection, collection, tenant: world.tenant, user: user, id: key)
                let conflicts = try await connection.query(
                    "SELECT (to_jsonb(c) - 'tenant_id' - 'incoming_payload')::text AS row FROM conflict_log c WHERE c.record_id = \(key) ORDER BY c.id"
                ).rows.map { try $0.decode("row", as: String.self) }
                return (row, conflicts, try await Self.owner(connection, tenant: world.tenant, user: user))
            }
        }
        return """
            \(collection) \(key): device \(mine ?? "nil") vs server \(server ?? "nil")
              device row: \(localFields)
              server row: \(row)
              user: \(owner)
              conflict log: \(conflicts.isEmpty ? "none" : conflicts.joined(separator: "; "))
              history: \(device.ledger.history(.init(collection: collection, id: id)).suffix(40).joined(separator: " | "))
            """
    }

    /// The server's row of a record (a tombstone too) as JSON, for a failure message; the
    /// user's settings row for `userSettings`.
    static func serverRow(_ connection: PGConnection, _ collection: SyncCollection, tenant: UUID, user: String, id: String) async throws -> String {
        let table = PGFragment.identifier(collection.table)
        let byID: PGQuery = collection == .userSettings ? "" : " AND t.id::text = \(id)"
        return try await connection.query(
            "SELECT (to_jsonb(t) - 'tenant_id')::text AS row FROM \(table) t WHERE t.tenant_id = \(tenant) AND t.user_id = \(user)\(byID)"
        ).rows.first.map { try $0.decode("row", as: String.self) } ?? "no server row"
    }

    /// The user's change counter and purge horizon, for a failure message.
    static func owner(_ connection: PGConnection, tenant: UUID, user: String) async throws -> String {
        try await connection.query("SELECT change_counter, purged_through_version FROM users WHERE tenant_id = \(tenant) AND user_id = \(user)").rows.first
            .map { "counter \(try $0.decode("change_counter", as: Int64.self)), purged through \(try $0.decode("purged_through_version", as: Int64.self))" } ?? "no user row"
    }
}
