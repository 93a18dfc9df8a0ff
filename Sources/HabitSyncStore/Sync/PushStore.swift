import Foundation
import HabitSyncAuth
import HabitSyncDomain
import LibPQClient
import Tracing

/// Applies pushed batches: one transaction per batch, a constant number of statements per
/// collection, conflicts settled inside PostgreSQL.
///
/// Every push of a user first takes that user's row lock (`users`), so the user's pushes
/// commit one after another, and versions come from the user's counter under that lock: a
/// pull can never see version n+1 committed before version n.
public struct PushStore: Sendable {
    public let pool: PGPool
    /// Where each user's transaction runs (on Citus, the node holding the user).
    public let pools: UserPools
    public let statementTimeout: Duration
    /// How far ahead of the server clock an `updatedAt` may be before it is clamped (and an
    /// event time before it is refused).
    public let maximumSkew: TimeInterval
    public let timeZones: TimeZoneCatalog
    public let queue: UserPushQueue
    /// One node, not a Citus coordinator (whose workers run the triggers and the transactions
    /// out of the push's sight): the push then folds its digest deltas into the user's row once
    /// (`closePush`), asks for the user's lock without waiting first (`lockLiveUser`), and its
    /// batch uses the statements Citus cannot route or refuses (`PushBatch.singleNode`).
    public let singleNode: Bool

    public init(
        pool: PGPool, statementTimeout: Duration = .seconds(5), maximumSkew: TimeInterval = 300,
        timeZones: TimeZoneCatalog = TimeZoneCatalog(), queue: UserPushQueue = UserPushQueue(), singleNode: Bool? = nil, pools: UserPools? = nil
    ) {
        self.singleNode = singleNode ?? !pool.configuration.connection.isDistributed
        self.pool = pool
        self.pools = pools ?? UserPools(single: pool)
        self.statementTimeout = statementTimeout
        self.maximumSkew = maximumSkew
        self.timeZones = timeZones
        self.queue = queue
    }

    public enum Outcome: Sendable, Equatable {
        /// The response to send: new, or the first response to this batch again.
        case response(status: Int, body: [UInt8], replayed: Bool)
        /// The same batchId arrived with other content.
        case batchConflict
    }

    /// What one push did, for metrics: results by collection and status, and the steps the
    /// slow path had to skip because PostgreSQL refused them (for the log).
    public struct Tally: Sendable, Equatable {
        /// Nil: a change naming no collection this server knows (`label`).
        public var counts: [SyncCollection?: [ChangeStatus: Int]] = [:]
        public var skippedSteps: [String] = []
        /// What PostgreSQL refused, per refused change: its collection, SQLSTATE, constraint and
        /// column (never values), for the log.
        public var refusals: [String] = []
        /// Whether the batch took the slow path (a change PostgreSQL refused).
        public var isolatedRefusals = false

        /// A collection as metrics, logs and the conflict log name it: "unknown" for a change
        /// naming none this server knows.
        public static func label(_ collection: SyncCollection?) -> String { collection?.rawValue ?? "unknown" }
    }

    /// Creates a user on first use and takes the new row's lock: `refuse_erased_user`
    /// (migrations 0015, 0034) refuses an erased account before the insert (SQLSTATE HS410), so
    /// a known erasure creates no row and takes no lock; nor does a user of an erased tenant.
    /// A plain `INSERT … VALUES` whose `DO UPDATE SET` takes the inserted row's defaults,
    /// because Citus routes nothing else to one shard (deploy/README.md).
    static func lockUser(tenant: UUID, user: String) -> PGQuery {
        """
        INSERT INTO users (tenant_id, user_id) VALUES (\(tenant), \(user))
        ON CONFLICT (tenant_id, user_id) DO UPDATE SET last_seen_at = EXCLUDED.last_seen_at
        RETURNING change_counter, derived_record_id, account_epoch, database_epoch, restored_through, account_restarted
        """
    }

    /// The lock of a user who has a row, without writing it: a push writes the row once, at
    /// its end (`closeUser`). A second write of a row the transaction already wrote would fire
    /// the row's foreign-key check on `tenants` again (a `FOR KEY SHARE` lock every push of the
    /// tenant shares: a MultiXact each).
    static func lockExistingUser(tenant: UUID, user: String) -> PGQuery {
        """
        SELECT change_counter, derived_record_id, account_epoch, database_epoch, restored_through, account_restarted
        FROM users WHERE tenant_id = \(tenant) AND user_id = \(user) FOR UPDATE
        """
    }

    /// `lockExistingUser` when no other request holds the lock: no row when it is held (or the
    /// user has none yet), without waiting; with whether the account was erased, asked in the
    /// same statement. No wait comes between the two: a row locked at once was not being
    /// erased, and one whose erasure committed meanwhile is gone (a deleted row is not locked,
    /// and the careful way follows), so the statement of its own that a wait needs is not.
    static func lockExistingUserIfFree(tenant: UUID, user: String) -> PGQuery {
        """
        SELECT change_counter, derived_record_id, account_epoch, database_epoch, restored_through, account_restarted,
               habitsync_user_erased(tenant_id, user_id) AS erased
        FROM users WHERE tenant_id = \(tenant) AND user_id = \(user) FOR UPDATE SKIP LOCKED
        """
    }

    /// Raises HS410 when the account was erased; ends a pipeline there.
    static func assertNotErased(tenant: UUID, user: String) -> PGQuery {
        "SELECT habitsync_assert_not_erased(\(tenant), \(user))"
    }

    /// What `refuse_erased_user` raises, and `habitsync_assert_not_erased`: this project's own
    /// code, class HS.
    static let accountErasedState = PGSQLState("HS410")

    /// The user's row, locked for this transaction (created on first use); an erased account
    /// is refused (`StoreError.erasedAccount`) and nothing is stored for it. The erasure is
    /// looked for once the lock is granted (a statement of its own: a snapshot taken after
    /// any wait, so a request that waited behind an erasure sees its marker), and before the
    /// lock is waited for (a request arriving while an erasure holds or waits for the lock is
    /// refused at once). `tryingFirst` (a push on one node): the lock is first asked for
    /// without waiting, and when it is free the checks before and after it are one column of
    /// the lock's statement (`lockExistingUserIfFree`); when another request holds it, the
    /// careful way follows. (Not on Citus, whose routing of
    /// `SKIP LOCKED` to a worker is not tested here.) `then`: statements for the same round
    /// trip, after the lock (run again after a wait).
    static func lockLiveUser(
        _ connection: PGConnection, tenant: UUID, user: String, then more: [PGQuery] = [], tryingFirst: Bool = false
    ) async throws -> (user: PGRow, more: [PGResult]) {
        do {
            if tryingFirst {
                let free = try await connection.pipeline([lockExistingUserIfFree(tenant: tenant, user: user)] + more)
                guard free.count == 1 + more.count else { throw PGError(kind: .client, message: "the user's lock returned \(free.count) results") }
                if let row = free[0].rows.first {
                    if try row.decode("erased", as: Bool.self) { throw StoreError.erasedAccount }
                    return (row, Array(free[1...]))
                }
            }
            // Held by another request, or no row yet: look for an erasure, wait, look again.
            let results = try await connection.pipeline(
                [assertNotErased(tenant: tenant, user: user), lockExistingUser(tenant: tenant, user: user), assertNotErased(tenant: tenant, user: user)] + more)
            guard results.count == 3 + more.count else { throw PGError(kind: .client, message: "the user's lock returned \(results.count) results") }
            if let row = results[1].rows.first { return (row, Array(results[3...])) }
            // No row: a new user (or one an erasure just deleted, whom the insert refuses).
            let row = try await connection.query(lockUser(tenant: tenant, user: user)).single()
            return (row, try more.isEmpty ? [] : await connection.pipeline(more))
        } catch let error as PGError where error.sqlState == Self.accountErasedState {
            throw StoreError.erasedAccount
        }
    }

    /// `lockLiveUser`, the stored answer to this batch if it was seen before (after the lock,
    /// so a retry racing its first attempt sees its answer), and the batch's `prefetch` reads,
    /// as one round trip.
    static func lockLiveUserFindingBatch(
        _ connection: PGConnection, tenant: UUID, user: String, device: String, batch: UUID, prefetch: [PGQuery] = [], tryingFirst: Bool = false
    ) async throws -> (user: PGRow, previous: PGRow?, prefetched: [PGResult]) {
        let (row, more) = try await lockLiveUser(
            connection, tenant: tenant, user: user, then: [findBatch(tenant: tenant, user: user, device: device, batch: batch)] + prefetch,
            tryingFirst: tryingFirst)
        return (row, more.first?.rows.first, Array(more.dropFirst()))
    }

    static func findBatch(tenant: UUID, user: String, device: String, batch: UUID) -> PGQuery {
        """
        SELECT request_sha256, response_status, response_body FROM push_batches
        WHERE tenant_id = \(tenant) AND user_id = \(user) AND device_id = \(device) AND batch_id = \(batch)
        """
    }

    static func touchDevice(tenant: UUID, user: String, device: String) -> PGQuery {
        """
        INSERT INTO devices (tenant_id, user_id, device_id, last_push_at) VALUES (\(tenant), \(user), \(device), now())
        ON CONFLICT (tenant_id, user_id, device_id) DO UPDATE SET last_seen_at = EXCLUDED.last_seen_at, last_push_at = EXCLUDED.last_push_at
        """
    }

    static func saveBatch(tenant: UUID, user: String, device: String, batch: UUID, hash: [UInt8], body: [UInt8]) -> PGQuery {
        """
        INSERT INTO push_batches (tenant_id, user_id, device_id, batch_id, request_sha256, response_status, response_body)
        VALUES (\(tenant), \(user), \(device), \(batch), \(PGBytes(hash)), 200, \(PGBytes(body)))
        """
    }

    /// Moves the user's counter (the push holds the user's lock, so it always moves).
    static func saveCounter(tenant: UUID, user: String, counter: Int64) -> PGQuery {
        "UPDATE users SET change_counter = \(counter) WHERE tenant_id = \(tenant) AND user_id = \(user) AND change_counter < \(counter)"
    }

    /// A push's one write of the user's row, last: the counter, the time it was seen, and the
    /// digest and XP-ledger deltas its own statements' triggers set aside
    /// (`habitsync.defer_digests`, migrations 0034 and 0037), and those the push settled itself
    /// (`settledDigests`: daily progress where its triggers stepped aside, migration 0049).
    static func closeUser(
        tenant: UUID, user: String, counter: Int64, digestsDeferred: Bool, settledDigests: [SyncCollection: RecordDigest] = [:]
    ) -> PGQuery {
        guard digestsDeferred else {
            // On Citus the triggers wrote the digests themselves (on the worker).
            return "UPDATE users SET change_counter = greatest(change_counter, \(counter)), last_seen_at = now() WHERE tenant_id = \(tenant) AND user_id = \(user)"
        }
        var digests: PGQuery = "habitsync_add_digests(record_digests, nullif(current_setting('habitsync.pending_digests', true), '')::jsonb)"
        let settled = settledDigests.filter { !$0.value.isEmpty }
        if !settled.isEmpty { digests = "habitsync_add_digests(\(digests), \(Self.digestChanges(settled))::jsonb)" }
        return """
            UPDATE users SET change_counter = greatest(change_counter, \(counter)), last_seen_at = now(),
                record_digests = \(digests),
                xp_ledger_sum = xp_ledger_sum + \(pendingXPLedger)
            WHERE tenant_id = \(tenant) AND user_id = \(user)
            """
    }

    /// Digest changes as `habitsync_add_digests` takes them: `{"dailyProgress": {"count": -1,
    /// "xor": <signed 64-bit>}}`, the XOR as PostgreSQL's `habitsync_digest_term` gives it.
    static func digestChanges(_ changes: [SyncCollection: RecordDigest]) -> String {
        let members = changes.sorted { $0.key.rawValue < $1.key.rawValue }.map { collection, change in
            "\"\(collection.rawValue)\": {\"count\": \(change.count), \"xor\": \(Int64(bitPattern: change.hash))}"
        }
        return "{" + members.joined(separator: ", ") + "}"
    }

    /// A push's last statement on one node: the device's last push, the user's row (counter,
    /// time seen, digests) and the saved answer written by one statement, which also sends the
    /// notice when there is one (four statements, each with an executor of its own, before).
    /// The tables it writes have no digest triggers, so the user's row folds in every delta the
    /// push's earlier statements set aside. Not on Citus, which cannot send data-modifying `WITH`
    /// parts to one worker, nor a notification from one.
    ///
    /// What the push tells the world beside its notice, written by the same statement, so that
    /// it commits with the push or not at all: its webhook deliveries
    /// (`WebhookEvent.insertDeliveries`) and the user's other devices' background wakes
    /// (`WakeQueue.markOtherDevices`), when `changed` says what it stored (nil: nothing, or a
    /// push on Citus).
    static func closePush(
        tenant: UUID, user: String, device: String, counter: Int64, notice: ChangeNotice?, batch: UUID, hash: [UInt8], body: [UInt8],
        changed: WebhookEvent? = nil, settledDigests: [SyncCollection: RecordDigest] = [:]
    ) -> PGQuery {
        let last: PGQuery = notice.map(notifyChange) ?? "SELECT NULL"
        let outgoing: PGQuery =
            changed.map {
                """
                ,
                webhooks AS (\(WebhookEvent.insertDeliveries($0, tenant: tenant, user: user))),
                wakes AS (\(WakeQueue.markOtherDevices(tenant: tenant, user: user, device: device)))
                """
            } ?? ""
        return """
            WITH device AS (\(touchDevice(tenant: tenant, user: user, device: device))),
            closed AS (\(closeUser(tenant: tenant, user: user, counter: counter, digestsDeferred: true, settledDigests: settledDigests))),
            saved AS (\(saveBatch(tenant: tenant, user: user, device: device, batch: batch, hash: hash, body: body)))\(outgoing)
            \(last)
            """
    }

    /// What the XP ledger's triggers set aside in this push's transaction for
    /// `users.xp_ledger_sum` (`habitsync.pending_xp_ledger`, migration 0037); 0 outside a push.
    static let pendingXPLedger: PGFragment = "coalesce(nullif(current_setting('habitsync.pending_xp_ledger', true), '')::bigint, 0)"

    /// For a push's transaction, where not on Citus: the digest triggers set their deltas
    /// aside for `closeUser` instead of writing the user's row each (a Citus worker does not
    /// see the setting, and writes them at once as before).
    static let deferDigests = PGLocalSetting("habitsync.defer_digests", "on")

    /// For a push's transaction on one node, on its fast path: daily progress's digest and
    /// streak-month triggers step aside (migration 0049), and the push keeps both itself, from
    /// its settlement (`PushBatch.settlesDailyProgress`). Not on Citus, whose workers' triggers
    /// do their own work, nor on the slow path, whose savepoints would undo a write the push
    /// had already counted.
    static let settlesDailyProgress = PGLocalSetting("habitsync.push_settles_daily_progress", "on")

    /// Tells every replica's listener; `NOTIFY` is delivered at commit, and not at all on
    /// rollback. A statement of its own, on no table: on Citus a statement on the user's rows
    /// runs on a worker, whose notifications no listener hears (and Citus cannot commit a
    /// transaction that notified on a worker: "cannot PREPARE a transaction that has executed
    /// NOTIFY").
    static func notifyChange(_ notice: ChangeNotice) -> PGQuery {
        "SELECT pg_notify(\(ChangeNotice.channel), \(notice.payload))"
    }

    /// Moves the user's counter to `counter` and tells the listeners, in the caller's
    /// transaction (push, pull's derived-state catch-up, legacy import).
    static func moveCounter(_ connection: PGConnection, tenant: UUID, user: String, to counter: Int64, notice: ChangeNotice) async throws {
        _ = try await connection.pipeline([saveCounter(tenant: tenant, user: user, counter: counter), notifyChange(notice)])
    }

    /// - Parameters:
    ///   - requestHash: SHA-256 of the (decompressed) request body: a retry must send the same
    ///     bytes; other bytes under the same batchId are a conflict.
    ///   - encode: the answer's bytes as the device receives them, saved with the push for its
    ///     retries.
    public func push(
        identity: VerifiedIdentity, deviceID: String, request: PushRequest, requestHash: [UInt8], now: Date = Date(),
        encode: @escaping @Sendable (PushAnswer) -> [UInt8]
    ) async throws -> (Outcome, Tally) {
        let context = ValidationContext(
            now: now, maximumSkew: maximumSkew, timeZones: try await timeZones.names(pool),
            protocolVersion: request.protocolVersion)
        // Validation and grouping need no database: done before the user's lock is taken.
        let plan = try await withSpanWhenTraced("push.plan") { span in
            span?.attributes["habitsync.changes"] = request.changes.count
            return PushPlan(request.changes, context: context)
        }
        return try await queue.serialised(tenant: identity.tenantID, user: identity.userID) {
            do {
                return try await push(
                    identity: identity, deviceID: deviceID, request: request, plan: plan, requestHash: requestHash, context: context, encode: encode,
                    isolatingRefusals: false)
            } catch let error as PGError where error.isDataError {
                // PostgreSQL refused some value: the transaction rolled back whole. Apply the
                // batch again on the slow path, which finds and rejects what it refuses.
                return try await push(
                    identity: identity, deviceID: deviceID, request: request, plan: plan, requestHash: requestHash, context: context, encode: encode,
                    isolatingRefusals: true)
            }
        }
    }

    private func push(
        identity: VerifiedIdentity, deviceID: String, request: PushRequest, plan: PushPlan, requestHash: [UInt8], context: ValidationContext,
        encode: @escaping @Sendable (PushAnswer) -> [UInt8], isolatingRefusals: Bool
    ) async throws -> (Outcome, Tally) {
        let scope = try RequestScope.settings(tenantID: identity.tenantID, userID: identity.userID)
        let user = UserKey(tenant: identity.tenantID, user: identity.userID)
        let settlesDailyProgress = singleNode && !isolatingRefusals
        // On the user's shards every statement runs on that node's own tables, as on one server:
        // the triggers defer the digests there too.
        return try await pools.withUserTransaction(
            user, statementTimeout: statementTimeout,
            localSettings: scope + (singleNode ? [Self.deferDigests] : []) + (settlesDailyProgress ? [Self.settlesDailyProgress] : []),
            onShards: singleNode ? [] : [Self.deferDigests]
        ) { connection, onShards in
            let singleNode = singleNode || onShards
            // One round trip (with BEGIN and the settings): the user's lock, the replay lookup
            // and the reads the batch's steps would make (`PushPrefetch`).
            let prefetch = isolatingRefusals ? .none : PushPrefetch(plan, tenant: identity.tenantID, user: identity.userID, singleNode: singleNode)
            let (user, previous, prefetched) = try await Self.lockLiveUserFindingBatch(
                connection, tenant: identity.tenantID, user: identity.userID, device: deviceID, batch: request.batchId,
                prefetch: prefetch.queries, tryingFirst: singleNode)
            let counter = try user.decode("change_counter", as: Int64.self)
            let derivedID = try user.decode("derived_record_id", as: UUID.self)
            let epochs = try SyncEpochRefusal.serverState(user)
            // Before the replay lookup: a batch from another timeline is not answered from it.
            try SyncEpochRefusal.check(device: request.epoch, seenVersion: nil, writes: true, server: epochs)

            if let previous {
                let hash = try previous.decode("request_sha256", as: PGBytes.self).bytes
                guard hash == requestHash else { return (.batchConflict, Tally()) }
                // A replay notes the device too: it did push.
                try await connection.query(Self.touchDevice(tenant: identity.tenantID, user: identity.userID, device: deviceID))
                let body = try previous.decode("response_body", as: PGBytes.self).bytes
                return (.response(status: try previous.decode("response_status", as: Int.self), body: body, replayed: true), Tally())
            }

            let batch = PushBatch(
                connection: connection, tenant: identity.tenantID, user: identity.userID, device: deviceID, batchID: request.batchId,
                derivedRecordID: derivedID, firstVersion: counter + 1, context: context, isolatesRefusals: isolatingRefusals,
                singleNode: singleNode, settlesDailyProgress: settlesDailyProgress)
            try await batch.apply(plan, raw: request.changes, prefetched: try prefetch.found(prefetched))
            let derivedFrom = batch.nextVersion
            try await batch.recomputeDerivedStateIfNeeded()
            // The closing statements go as one pipeline with the COMMIT (and the writes still
            // deferred before them, `PushBatch.writeLater`): the conflict log (on the slow path
            // it runs alone, under a savepoint), the device's last push, the user's counter and
            // digests (every push: the time it was seen), the notice when versions moved, the
            // saved answer.
            var closing: [PGQuery] = []
            if isolatingRefusals {
                try await batch.logConflicts()
            } else if let log = batch.conflictLogQuery() {
                closing.append(log)
            }
            var notice: ChangeNotice?
            if batch.nextVersion - 1 > counter {
                let touched = batch.tally.counts.filter { ($0.value[.applied] ?? 0) > 0 }.keys.compactMap { $0 }.sorted { $0.rawValue < $1.rawValue }
                notice = ChangeNotice(
                    tenantID: identity.tenantID, userID: identity.userID, serverVersion: batch.nextVersion - 1, deviceID: deviceID, collections: touched,
                    traceParent: TraceParent.current())
            }
            let body = encode(batch.answer(epoch: epochs.epoch))
            if singleNode {
                closing.append(
                    Self.closePush(
                        tenant: identity.tenantID, user: identity.userID, device: deviceID, counter: batch.nextVersion - 1, notice: notice,
                        batch: request.batchId, hash: requestHash, body: body,
                        // Webhooks and wakes go out from one database, not yet from Citus (deploy/README.md).
                        changed: self.singleNode ? batch.webhookEvent(firstVersion: counter + 1, derivedFrom: derivedFrom) : nil,
                        settledDigests: batch.settledDigests))
            } else {
                closing.append(Self.touchDevice(tenant: identity.tenantID, user: identity.userID, device: deviceID))
                closing.append(Self.closeUser(tenant: identity.tenantID, user: identity.userID, counter: batch.nextVersion - 1, digestsDeferred: false))
                if let notice { closing.append(Self.notifyChange(notice)) }
                closing.append(
                    Self.saveBatch(tenant: identity.tenantID, user: identity.userID, device: deviceID, batch: request.batchId, hash: requestHash, body: body))
            }
            // The last round trip commits too (`PGConnection.pipeline(_:commit:)`).
            _ = try await connection.pipeline(closing, commit: true)
            var tally = batch.tally
            tally.skippedSteps = batch.skippedSteps
            tally.isolatedRefusals = isolatingRefusals
            return (.response(status: 200, body: body, replayed: false), tally)
        }
    }
}

extension PGConnectionConfiguration {
    /// Built for a Citus coordinator: its requests propagate their `SET LOCAL`s to the workers
    /// (`ServerConfiguration.distributedRequestSessionSettings`).
    fileprivate var isDistributed: Bool { sessionSettings["citus.propagate_set_commands"] != nil }
}
