import Foundation
import LibPQClient

/// What the database holds of a set of tracked batches, read as the schema owner (no RLS):
/// for each batch, how many of its records are stored and whether its idempotency record is.
struct StoredBatches {
    private let storedIDs: Set<UUID>
    private let idempotencyRecords: [String: Int]  // "user/batchId" → rows

    static func storedRecordIDs(tenant: UUID) -> PGQuery {
        """
        SELECT id FROM habits WHERE tenant_id = \(tenant)
        UNION ALL SELECT id FROM daily_progress WHERE tenant_id = \(tenant)
        UNION ALL SELECT id FROM usage_events WHERE tenant_id = \(tenant)
        """
    }

    static func storedBatchIDs(tenant: UUID) -> PGQuery {
        "SELECT user_id, batch_id FROM push_batches WHERE tenant_id = \(tenant)"
    }

    /// Both reads in one snapshot: right after a kill the dead server's last transaction may
    /// still commit (its pipeline held the COMMIT), and between two statements of their own
    /// the records could be read before it and the idempotency record after (a batch counted
    /// as "partial" once, that way).
    static func read(_ pool: PGPool, tenant: UUID) async throws -> StoredBatches {
        try await pool.withTransaction(isolation: .repeatableRead, readOnly: true) { connection in
            let ids = try await connection.query(storedRecordIDs(tenant: tenant)).rows.map { try $0.decode("id", as: UUID.self) }
            var batches: [String: Int] = [:]
            for row in try await connection.query(storedBatchIDs(tenant: tenant)).rows {
                batches["\(try row.decode("user_id", as: String.self))/\(try row.decode("batch_id", as: UUID.self))", default: 0] += 1
            }
            return StoredBatches(storedIDs: Set(ids), idempotencyRecords: batches)
        }
    }

    /// How many of the batch's records are stored (0…41).
    func storedRecords(of batch: TrackedBatch) -> Int {
        batch.recordIDs.count(where: storedIDs.contains)
    }

    /// How many idempotency records the batch has (0 or 1: the key is the batch).
    func idempotencyRecords(of batch: TrackedBatch, user: String) -> Int {
        idempotencyRecords["\(user)/\(batch.id)"] ?? 0
    }

    var totalRecords: Int { storedIDs.count }

    /// Per-batch verdicts for the devices' queues.
    struct Tally {
        var complete = 0  // every record and the idempotency record stored
        var absent = 0  // nothing stored
        var partial = 0  // anything else: a batch half applied, or applied without its record
    }

    func tally(_ devices: [PushingDevice]) -> Tally {
        var tally = Tally()
        for device in devices {
            for batch in device.batches {
                let records = storedRecords(of: batch)
                let receipts = idempotencyRecords(of: batch, user: device.user)
                if records == TrackedBatch.changeCount && receipts == 1 {
                    tally.complete += 1
                } else if records == 0 && receipts == 0 {
                    tally.absent += 1
                } else {
                    tally.partial += 1
                }
            }
        }
        return tally
    }

    /// Whether the batch is fully stored.
    func isComplete(_ batch: TrackedBatch, user: String) -> Bool {
        storedRecords(of: batch) == TrackedBatch.changeCount && idempotencyRecords(of: batch, user: user) == 1
    }
}
